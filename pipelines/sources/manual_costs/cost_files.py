"""Manual cost files (CSV or YAML): costs no cloud bills, such as labour, data labelling or
tooling invoices, or an allocation of on-prem hardware, one dated and attributed line each.

A file is a table of the columns `date` (YYYY-MM-DD), `cost_category` (one of
`mappings.COST_CATEGORIES`), `amount` (a decimal number), `currency` (an ISO 4217 code) and the
optional `description` and dimension columns (`training_run`, `experiment`, `dataset_version`,
`owner` and any other configured attribution dimension): a CSV file with a header, or a YAML
list of mappings with those keys. Every value is read as the text it is written as (a YAML
number or date too), so an amount is exact. Each line becomes a FOCUS row (`write_typed`) that
the FOCUS mapping (`pipelines/sources/focus_mapping.sql`) loads like any FOCUS file's.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from decimal import Decimal, InvalidOperation
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from connectors.errors import SourceError
from pipelines.config_rules import read_yaml
from pipelines.sources.mappings import COST_CATEGORIES, CategoryRule, currency_problem
from pipelines.warehouse.decimal_text import AMOUNT_LIMIT

REQUIRED_COLUMNS = ("date", "cost_category", "amount", "currency")
OPTIONAL_COLUMNS = ("description",)
SUFFIXES = (".csv", ".yaml", ".yml")
DATE_TEXT = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
AMOUNT_TEXT = re.compile(r"[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)")
AMOUNT_DECIMAL_PLACES = 10  # the warehouse's DECIMAL(38, 10)
FIX = "fix the file, nothing was loaded"
# A manual line's ServiceName is its cost category; one exact rule per category maps it to its
# x_CostCategory, so a line keeps the category its file gives (no cost_categories rule applies).
CATEGORY_RULES = tuple(
    CategoryRule(
        {"provider": "*", "service": category, "service_category": "*", "detail": "*", "charge_category": "*"}, category
    )
    for category in COST_CATEGORIES
)
TIMESTAMP_COLUMNS = ("BillingPeriodStart", "BillingPeriodEnd", "ChargePeriodStart", "ChargePeriodEnd")
TAG_ENTRIES = pa.list_(pa.struct([("key", pa.string()), ("value", pa.string())]))
UNPARSED = pa.struct([("column_name", pa.string()), ("value", pa.string())])


@dataclass(frozen=True)
class ManualLine:
    """One line of a manual cost file, validated.

    Attributes:
        row: its place in the file, 1-based (the header not counted).
        day: the day the cost is booked on.
        cost_category: its category.
        amount: the amount, exact.
        amount_text: the amount as written (what the FOCUS mapping converts).
        currency: its currency.
        description: what it is; None when blank.
        dimensions: {dimension: value} of the dimension columns it fills.
    """

    row: int
    day: date
    cost_category: str
    amount: Decimal
    amount_text: str
    currency: str
    description: str | None
    dimensions: Mapping[str, str]


@dataclass(frozen=True)
class ManualFile:
    """A manual cost file's columns (as written) and lines."""

    path: Path
    columns: tuple[str, ...]
    lines: tuple[ManualLine, ...]


def _records(path: Path) -> tuple[list[str], list[dict[str, str | None]]]:
    """The file's columns and records, every value as its text (None for a YAML entry's null)."""
    if not path.name.lower().endswith(".csv"):
        # plain: every scalar stays its text (12000.10 stays 12000.10, 2026-10-05 a string)
        return _yaml_records(path, read_yaml(path, plain=True))
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as error:
        raise SourceError(f"{path}: cannot read the file as UTF-8 text: {error}; {FIX}") from None
    reader = csv.DictReader(io.StringIO(text, newline=""), restval=None)
    columns = [name.strip() for name in reader.fieldnames or ()]
    records = []
    for number, record in enumerate(reader, start=1):
        if None in record:
            raise SourceError(f"{path}, row {number}: more values than the header has columns; {FIX}")
        records.append({name.strip(): value for name, value in record.items()})
    return columns, records


def _yaml_records(path: Path, document: object) -> tuple[list[str], list[dict[str, str | None]]]:
    if not isinstance(document, list):
        raise SourceError(f"{path}: the file must be a YAML list of cost lines (- date: …, amount: …); {FIX}")
    columns: dict[str, None] = {}
    for number, entry in enumerate(document, start=1):
        if not isinstance(entry, dict) or any(not isinstance(value, str) for value in entry.values()):
            raise SourceError(f"{path}, row {number}: a cost line must be a mapping of keys to plain values; {FIX}")
        columns.update(dict.fromkeys(entry))
    return list(columns), [{name: entry.get(name) for name in columns} for entry in document]


def _check_columns(path: Path, columns: Sequence[str], dimensions: Sequence[str]) -> None:
    missing = [name for name in REQUIRED_COLUMNS if name not in columns]
    if missing:
        raise SourceError(f"{path}: manual cost columns missing: {', '.join(missing)}; {FIX}")
    known = (*REQUIRED_COLUMNS, *OPTIONAL_COLUMNS, *dimensions)
    unknown = [name for name in columns if name not in known]
    if unknown:
        raise SourceError(
            f"{path}: column {unknown[0]!r} is not a manual cost column; the columns are {', '.join(known)} "
            f"(dimensions as configured under attribution.dimensions); {FIX}"
        )


def _line(path: Path, row: int, record: Mapping[str, str | None], dimensions: Sequence[str]) -> ManualLine:
    """One record as a line, or the SourceError naming its file, row and column."""
    values = {name: (value or "").strip() for name, value in record.items()}

    def bad(column: str, problem: str) -> SourceError:
        return SourceError(f"{path}, row {row}, column {column}: {values[column]!r} {problem}; {FIX}")

    blank = next((column for column in REQUIRED_COLUMNS if not values[column]), None)
    if blank is not None:
        raise SourceError(f"{path}, row {row}, column {blank}: no value; {FIX}")
    if not DATE_TEXT.fullmatch(values["date"]):
        raise bad("date", "is not a date YYYY-MM-DD")
    try:
        day = date.fromisoformat(values["date"])
    except ValueError:
        raise bad("date", "is not a date YYYY-MM-DD") from None
    if values["cost_category"] not in COST_CATEGORIES:
        raise bad("cost_category", f"is not a cost category; use one of {', '.join(COST_CATEGORIES)}")
    amount_text = values["amount"]
    if amount_text != record["amount"]:
        raise SourceError(f"{path}, row {row}, column amount: {record['amount']!r} has blanks around it; {FIX}")
    try:
        amount = Decimal(amount_text) if AMOUNT_TEXT.fullmatch(amount_text) else None
    except InvalidOperation:
        amount = None
    if amount is None:
        raise bad("amount", "is not a decimal number such as 1250.00 (no currency sign or thousands separator)")
    if amount.as_tuple().exponent < -AMOUNT_DECIMAL_PLACES or abs(amount) >= AMOUNT_LIMIT:
        raise bad("amount", "is not an amount RunLedger loads: at most 10 decimal places, below 10^15")
    problem = currency_problem(values["currency"])
    if problem:
        raise bad("currency", problem)
    return ManualLine(
        row=row,
        day=day,
        cost_category=values["cost_category"],
        amount=amount,
        amount_text=amount_text,
        currency=values["currency"],
        description=values.get("description") or None,
        dimensions={name: values[name] for name in dimensions if values.get(name)},
    )


def read_manual_file(path: Path, dimensions: Sequence[str]) -> ManualFile:
    """Reads and validates one manual cost file.

    Args:
        path: a `.csv`, `.yaml` or `.yml` file.
        dimensions: the attribution dimensions a column may fill.

    Raises:
        SourceError: naming the file, and the row (1-based, header not counted) and column of the
            first bad value: a missing or unknown column, a date that is not YYYY-MM-DD, an unknown
            cost category, an amount that is not a decimal number, an unknown currency.
    """
    columns, records = _records(path)
    _check_columns(path, columns, dimensions)
    lines = tuple(_line(path, row, record, dimensions) for row, record in enumerate(records, start=1))
    return ManualFile(path=path, columns=tuple(columns), lines=lines)


def write_typed(manual: ManualFile, target: Path, *, source_name: str, dimension_tags: Mapping[str, str]) -> None:
    """The file's lines as the Parquet file the FOCUS mapping reads (`focus_files.write_typed`'s
    columns), one row per line in file order (a row's key is its place): ProviderName,
    PublisherName, InvoiceIssuerName and BillingAccountId the source's name; ChargeCategory
    `Usage`, or `Adjustment` for a negative amount (a correction); ChargeFrequency `One-Time`;
    the charge period the line's day, the billing period its month; BilledCost = EffectiveCost =
    ListCost = ContractedCost = the amount; ServiceName the cost category; Tags the dimension
    values, each under its dimension's first configured tag key (`dimension_tags`).
    """

    def month_start(day: date) -> datetime:
        return datetime(day.year, day.month, 1)

    def next_month(day: date) -> datetime:
        return datetime(day.year + day.month // 12, day.month % 12 + 1, 1)

    lines = manual.lines
    amounts = [line.amount_text for line in lines]
    columns = {
        "BillingAccountId": [source_name] * len(lines),
        "BillingAccountName": [source_name] * len(lines),
        "BillingCurrency": [line.currency for line in lines],
        "BillingPeriodStart": [month_start(line.day) for line in lines],
        "BillingPeriodEnd": [next_month(line.day) for line in lines],
        "ChargePeriodStart": [datetime(line.day.year, line.day.month, line.day.day) for line in lines],
        "ChargePeriodEnd": [
            datetime(line.day.year, line.day.month, line.day.day) + timedelta(days=1) for line in lines
        ],
        "ChargeCategory": ["Adjustment" if line.amount < 0 else "Usage" for line in lines],
        "ChargeFrequency": ["One-Time"] * len(lines),
        "ChargeDescription": [line.description for line in lines],
        "ProviderName": [source_name] * len(lines),
        "PublisherName": [source_name] * len(lines),
        "InvoiceIssuerName": [source_name] * len(lines),
        "ServiceName": [line.cost_category for line in lines],
        "BilledCost": amounts,
        "EffectiveCost": amounts,
        "ListCost": amounts,
        "ContractedCost": amounts,
    }
    table = pa.table(
        {
            **{
                name: pa.array(values, pa.timestamp("us") if name in TIMESTAMP_COLUMNS else pa.string())
                for name, values in columns.items()
            },
            "Tags": pa.array(
                [
                    [{"key": dimension_tags[name], "value": value} for name, value in line.dimensions.items()]
                    for line in lines
                ],
                TAG_ENTRIES,
            ),
            "_unparsed_timestamp": pa.nulls(len(lines), UNPARSED),
            "_unparsed_key_value": pa.nulls(len(lines), UNPARSED),
            "_extra_columns": pa.array([[] for _ in lines], TAG_ENTRIES),
        }
    )
    pq.write_table(table, target)
