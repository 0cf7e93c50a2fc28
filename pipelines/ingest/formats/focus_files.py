"""FOCUS 1.0-1.2 exports (CSV or Parquet), read for DuckDB's mapping onto `focus_line_items`
(`sql/staging/focus_normalize.sql`).

Polars types each file into a Parquet file DuckDB maps (`write_typed`): CSV is read as text (the
literal `NULL` is NULL) and stays text but for its timestamps, so money converts from its decimal
text exactly; the FOCUS timestamps are parsed (in UTC); `Tags` (a JSON object string in CSV, a map
in Parquet) become key/value entries (Tags text that is not a JSON object of tags is refused). A
file's columns of another FOCUS version are read by name.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date, datetime
from decimal import Decimal
from functools import cache
from pathlib import Path

import polars as pl

from connectors.errors import SourceError, missing_columns_error
from pipelines.ingest.formats.delivery import MappedDelivery, create_mapping, fetch_dict, memory_connection
from pipelines.ingest.mappings import CategoryRule
from pipelines.warehouse.catalog import table_columns
from pipelines.warehouse.sql import read_sql

REQUIRED_COLUMNS = (
    "BilledCost",
    "EffectiveCost",
    "BillingCurrency",
    "BillingPeriodStart",
    "ChargePeriodStart",
    "ProviderName",
)
CSV_NULLS = ["NULL", ""]
# A tag of a JSON object: its key, and its value as written (a string's text without its quotes, a
# number's or boolean's text); a null value is no tag.
TAG_PAIR = r'"((?:[^"\\]|\\.)*)"\s*:\s*(?:"((?:[^"\\]|\\.)*)"|(-?[0-9][0-9.eE+-]*|true|false))'
# FOCUS's Key-Value Format: a JSON object whose values are strings, numbers, booleans or null.
JSON_SPACE = r"[ \t\r\n]*"
JSON_STRING = r'"(?:[^"\\\x00-\x1f]|\\["\\/bfnrt]|\\u[0-9A-Fa-f]{4})*"'
JSON_SCALAR = rf"(?:{JSON_STRING}|-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?|true|false|null)"
TAG_MEMBER = rf"{JSON_SPACE}{JSON_STRING}{JSON_SPACE}:{JSON_SPACE}{JSON_SCALAR}{JSON_SPACE}"
TAGS_OBJECT = rf"^{JSON_SPACE}\{{(?:{TAG_MEMBER}(?:,{TAG_MEMBER})*|{JSON_SPACE})\}}{JSON_SPACE}$"
TAGS = pl.List(pl.Struct({"key": pl.String, "value": pl.String}))
TIMESTAMP_TEXT = r"(?i)(Z|UTC|\+00:?00)$"
TIMESTAMP_FORMS = ("%Y-%m-%d %H:%M:%S%.f", "%Y-%m-%d %H:%M", "%Y-%m-%d")
QUOTED_VALUE_LIMIT = 200  # characters of a bad value an error message quotes
UNPARSED = pl.Struct({"column_name": pl.String, "value": pl.String})


@cache
def timestamp_columns() -> tuple[str, ...]:
    """The FOCUS timestamp columns: focus_line_items' own TIMESTAMP columns."""
    return tuple(
        name for name, type_ in table_columns("focus_line_items").items() if type_ == "TIMESTAMP" and name[:2] != "x_"
    )


def scan_focus(file: Path) -> pl.LazyFrame:
    """One file of the export, lazily, after checking it has the columns FOCUS cannot do without.

    Raises:
        SourceError: naming the file when it cannot be read or lacks a required column.
    """
    try:
        if file.name.lower().endswith(".parquet"):
            frame = pl.scan_parquet(file)
        else:
            frame = pl.scan_csv(file, infer_schema=False, null_values=CSV_NULLS)
        schema_names = frame.collect_schema().names()
    except (pl.exceptions.PolarsError, OSError) as error:
        raise SourceError(f"cannot read FOCUS file {file}: {error}") from None
    missing = [c for c in REQUIRED_COLUMNS if c not in schema_names]
    if missing:
        raise missing_columns_error(file, "FOCUS", missing, schema_names)
    return frame


def delivered_columns(files: Sequence[Path]) -> list[str]:
    """The columns of the export's files, as they name them."""
    columns: dict[str, None] = {}
    for file in files:
        columns.update(dict.fromkeys(scan_focus(file).collect_schema().names()))
    return list(columns)


def _timestamp_text(name: str) -> pl.Expr:
    stripped = pl.col(name).str.strip_chars()
    return pl.when(stripped != "").then(stripped).str.replace(TIMESTAMP_TEXT, "").str.replace("T", " ")


def _as_timestamp(schema: pl.Schema, name: str) -> pl.Expr:
    """A FOCUS timestamp as a UTC datetime: text in one of the ISO 8601 forms FOCUS exports use
    (NULL when in none), or a datetime (converted to UTC when it has a time zone)."""
    if schema[name] == pl.String:
        text = _timestamp_text(name)
        return pl.coalesce(*[text.str.to_datetime(form, time_unit="us", strict=False) for form in TIMESTAMP_FORMS])
    if getattr(schema[name], "time_zone", None):
        return pl.col(name).cast(pl.Datetime("us", "UTC")).dt.replace_time_zone(None)
    return pl.col(name).cast(pl.Datetime("us"))


def _unparsed_tags(schema: pl.Schema) -> pl.Expr:
    """Tags text that is not a JSON object of FOCUS tags (string, number, boolean or null values),
    as written; NULL where Tags is blank, one, or a map."""
    if "Tags" not in schema or schema["Tags"] != pl.String:
        return pl.lit(None, dtype=pl.String).alias("_unparsed_tags")
    tags = pl.col("Tags")
    written = tags.str.strip_chars() != ""
    return pl.when(written & ~tags.str.contains(TAGS_OBJECT)).then(tags).alias("_unparsed_tags")


def _tags(schema: pl.Schema) -> pl.Expr:
    """Tags as key/value entries: from a JSON object string (its values as written, numbers and
    booleans as their text), or a map."""
    if schema["Tags"] == pl.String:
        pairs = pl.col("Tags").fill_null("").str.extract_all(TAG_PAIR)
        return pairs.list.eval(
            pl.struct(
                pl.element().str.extract(TAG_PAIR, 1).alias("key"),
                pl.coalesce(pl.element().str.extract(TAG_PAIR, 2), pl.element().str.extract(TAG_PAIR, 3)).alias(
                    "value"
                ),
            )
        )
    return pl.col("Tags").cast(TAGS)


def scan_periods(files: Sequence[Path]) -> pl.LazyFrame:
    """The billing period (first day of BillingPeriodStart's month) of each row of the files, as
    `period`, with its file (`file`) and row (`_row`, 0-based), lazily; and `unparsed`, where
    BillingPeriodStart is text that is not a timestamp ({file, row, value}; `period` is NULL there).

    Raises:
        SourceError: naming a file that cannot be read or lacks a required column.
    """
    frames = []
    for file in files:
        frame = scan_focus(file)
        schema = frame.collect_schema()
        start = _as_timestamp(schema, "BillingPeriodStart")
        text = pl.col("BillingPeriodStart") if schema["BillingPeriodStart"] == pl.String else pl.lit(None, pl.String)
        unparsed = pl.struct(pl.lit(str(file)).alias("file"), pl.col("_row"), text.alias("value"))
        frames.append(
            frame.with_row_index("_row").select(
                start.dt.truncate("1mo").dt.date().alias("period"),
                pl.when(text.is_not_null() & start.is_null()).then(unparsed).alias("unparsed"),
                pl.lit(str(file)).alias("file"),
                pl.col("_row").cast(pl.Int64),
            )
        )
    return pl.concat(frames)


def unparsed_timestamp_error(location: str, row: int, column: str, value: str) -> SourceError:
    """The error for a FOCUS timestamp that is not one: its file, row (0-based here), column and text."""
    return SourceError(
        f"{location}, row {row + 1}, column {column}: {value!r} is not a timestamp YYYY-MM-DD HH:MM:SS "
        "(optionally with T and Z); fix or re-export the file, nothing was loaded"
    )


def write_typed(file: Path, target: Path) -> None:
    """One file of the export as the Parquet file DuckDB maps: its timestamps in UTC, Tags as
    key/value entries, every other column as the file has it; rows in file order (a row's key is
    its place). A row's first timestamp text that is not a timestamp is kept, with its column, in
    `_unparsed_timestamp`, and Tags text that is not a JSON object of tags in `_unparsed_tags`
    (`read_delivery` refuses either).

    Raises:
        SourceError: naming the file when it cannot be read.
    """
    frame = scan_focus(file)
    schema = frame.collect_schema()
    timestamps = [name for name in timestamp_columns() if name in schema]
    typed = frame.with_columns(
        *[_as_timestamp(schema, name).alias(name) for name in timestamps],
        *([_tags(schema).alias("Tags")] if "Tags" in schema else []),
        _unparsed_timestamp(schema, [name for name in timestamps if schema[name] == pl.String]),
        _unparsed_tags(schema),
    )
    try:
        typed.sink_parquet(target)
    except (pl.exceptions.PolarsError, OSError) as error:
        target.unlink(missing_ok=True)
        raise SourceError(f"cannot read FOCUS file {file}: {error}") from None


def _unparsed_timestamp(schema: pl.Schema, text_columns: list[str]) -> pl.Expr:
    """{column_name, value} of the first of `text_columns` whose text is not a timestamp."""
    unparsed = [
        pl.when(pl.col(name).is_not_null() & _as_timestamp(schema, name).is_null()).then(
            pl.struct(pl.lit(name).alias("column_name"), pl.col(name).alias("value"))
        )
        for name in text_columns
    ]
    if not unparsed:
        return pl.lit(None, dtype=UNPARSED).alias("_unparsed_timestamp")
    return pl.coalesce(unparsed).alias("_unparsed_timestamp")


def read_delivery(
    files: Sequence[Path],
    locations: Sequence[str],
    *,
    source_name: str,
    source_format: str,
    billing_period: date,
    select_period: bool,
    category_rules: Sequence[CategoryRule],
    ingested_at: datetime,
) -> tuple[MappedDelivery, int, Decimal]:
    """Reads the delivery's typed files (in an in-memory DuckDB): refuses a money value that is not
    a finite number, a timestamp that is not one or Tags that are not a JSON object of tags, then
    the raw control totals, row count and Σ BilledCost of the period.

    Args:
        files: the files as `write_typed` writes them.
        locations: where the user finds each file.
        source_name, source_format, category_rules, ingested_at: what the rows are mapped with.
        billing_period: the first day of the period.
        select_period: whether the files hold several periods (a folder of FOCUS files), of which
            the delivery is the period's rows; else every row is the period's (an AWS FOCUS export).

    Returns:
        The delivery, its rows and its raw BilledCost.

    Raises:
        SourceError: naming the file, the row (1-based, header not counted), the column and the
            value of the first money value that is not a finite number, timestamp that is not one
            or Tags text that is not a JSON object of tags.
    """
    read_params = {"billing_period": billing_period, "select_period": select_period}
    with memory_connection() as conn:
        create_mapping(conn, "focus", files, locations)
        bad = fetch_dict(
            conn, read_sql("staging/focus_delivery_totals", "first_bad_value"), {"files": [str(f) for f in files]}
        )
        if bad is not None and bad["column_name"] == "Tags":
            raise SourceError(
                f"{bad['location']}, row {bad['file_row_number'] + 1}, column Tags: {_shortened(bad['value'])!r} "
                'is not a JSON object of tags (e.g. {"training_run": "llm-7b-pt-r1"}); fix or re-export the file, '
                "nothing was loaded"
            )
        if bad is not None and bad["is_timestamp"]:
            raise unparsed_timestamp_error(bad["location"], bad["file_row_number"], bad["column_name"], bad["value"])
        if bad is not None:
            raise SourceError(
                f"{bad['location']}, row {bad['file_row_number'] + 1}, column {bad['column_name']}: "
                f"{bad['value']!r} is not a finite number; fix or re-export the file, nothing was loaded"
            )
        totals = fetch_dict(
            conn, read_sql("staging/focus_delivery_totals", "totals"), {"files": [str(f) for f in files], **read_params}
        )
    delivery = MappedDelivery(
        export_format="focus",
        files=tuple(files),
        locations=tuple(locations),
        first_rows=(0,) * len(files),
        read_params=read_params,
        row_params={"source_name": source_name, "source_format": source_format, "ingested_at": ingested_at},
        category_rules=tuple(category_rules),
        currencies=tuple(sorted(totals["currencies"] or ())),
        rows_outside_period=totals["rows_outside_period"],
        file_outside_period=totals["file_outside_period"],
    )
    return delivery, totals["rows"], totals["billed_cost"]


def _shortened(value: str) -> str:
    """A value for an error message: its first QUOTED_VALUE_LIMIT characters, then `…`."""
    return value if len(value) <= QUOTED_VALUE_LIMIT else f"{value[:QUOTED_VALUE_LIMIT]}…"
