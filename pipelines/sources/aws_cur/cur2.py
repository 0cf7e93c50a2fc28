"""AWS CUR 2.0 (Data Exports, Parquet) mapped onto FOCUS 1.2 by DuckDB, straight from the files.

The mapping is SQL (`mapping.sql` beside this module): DuckDB reads the delivery's Parquet files,
computes the FOCUS columns and writes `focus_line_items` in one pass, without a copy of the rows
in Python or in a staging file. A legacy CUR delivery is first converted to CUR 2.0 columns
(`legacy_cur`) and mapped the same way.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date, datetime
from decimal import Decimal
from itertools import accumulate
from pathlib import Path

import duckdb
import polars as pl

from connectors.errors import SourceError, missing_columns_error
from pipelines.sources.delivery import FormatMapping, MappedDelivery, create_mapping, fetch_dict, memory_connection
from pipelines.sources.mappings import MappingRule
from pipelines.warehouse.sql import dict_rows, read_sql_file

MAPPING = FormatMapping("cur2", Path(__file__).with_name("mapping.sql"), distinct_values=("units", "products"))
TOTALS = Path(__file__).with_name("totals.sql")

REQUIRED_COLUMNS = (
    "bill_billing_period_start_date",
    "line_item_line_item_type",
    "line_item_unblended_cost",
    "line_item_usage_start_date",
    "line_item_usage_end_date",
    "line_item_currency_code",
)


def delivered_columns(files: Sequence[Path]) -> tuple[str, ...]:
    """The columns of the delivery's files (their footers), after checking that every file is
    Parquet with the required columns.

    Raises:
        SourceError: naming the file that cannot be read or lacks a required column.
    """
    if not files:
        raise SourceError("the delivery lists no CUR 2.0 files")
    columns: dict[str, None] = {}
    for file in files:
        try:
            names = pl.read_parquet_schema(file)
        except (pl.exceptions.PolarsError, OSError) as error:
            raise SourceError(f"cannot read CUR 2.0 file {file}: {error}") from None
        missing = [c for c in REQUIRED_COLUMNS if c not in names]
        if missing:
            raise missing_columns_error(file, "CUR 2.0", missing, names)
        columns.update(dict.fromkeys(names))
    return tuple(columns)


def _refuse_bad_amounts(conn: duckdb.DuckDBPyConnection, files: list[str]) -> None:
    """Raises SourceError for the delivery's first amount that is not a number or is beyond the
    amounts RunLedger loads (`money_limit`), naming its file, row (1-based) and column."""
    bad = fetch_dict(conn, read_sql_file(TOTALS, "first_bad_money"), {"files": files})
    if bad is not None:
        raise SourceError(
            f"{bad['location']}, row {bad['source_row'] + 1}, column {bad['column_name']}: {bad['value']!r} is not "
            "a finite number below 10^15; fix or re-export the file, nothing was loaded"
        )


def read_delivery(
    files: Sequence[Path],
    locations: Sequence[str | None],
    *,
    source_name: str,
    source_format: str,
    billing_period: date,
    execution_id: str,
    category_rules: Sequence[MappingRule],
    ingested_at: datetime,
    amounts_as_text: bool = False,
) -> tuple[MappedDelivery, int, Decimal]:
    """Reads the delivery's files once (in an in-memory DuckDB) for the raw control totals: row
    count and Σ coalesce(net unblended, unblended), per file and in all. Amounts that do not
    convert are refused naming the file, column and value: every amount first when they are text
    (`amounts_as_text`, a converted legacy delivery), else when the totals fail.

    Args:
        files: the delivery's Parquet files, in delivery order.
        locations: where the user finds each file (an s3:// URI); None when its rows name their
            file in `_source_file` (a converted legacy delivery).
        source_name, source_format, billing_period, execution_id, category_rules, ingested_at:
            what the rows are mapped with (x_SourceName, x_SourceFormat, x_LineItemKey,
            x_CostCategory, x_IngestedAt).
        amounts_as_text: whether the amounts are the text AWS wrote.

    Returns:
        The delivery, its rows and its raw BilledCost.

    Raises:
        SourceError: an amount that is not a number.
        duckdb.Error: a timestamp that is not one.
    """
    paths = [str(file) for file in files]
    with memory_connection() as conn:
        create_mapping(conn, MAPPING, files, locations)
        if amounts_as_text:
            _refuse_bad_amounts(conn, paths)
        try:
            rows = dict_rows(
                conn.execute(read_sql_file(TOTALS, "totals"), {"files": paths, "billing_period": billing_period})
            )
        except duckdb.Error:
            _refuse_bad_amounts(conn, paths)
            raise
        by_file = {row["file"]: row for row in rows}
    empty = {
        "rows": 0,
        "billed_cost": Decimal(0),
        "rows_outside_period": 0,
        "file_outside_period": None,
        "currencies": [],
    }
    per_file = [by_file.get(str(file), empty) for file in files]
    location_of = {str(file): location for file, location in zip(files, locations)}
    outside = [row["file_outside_period"] for row in per_file if row["rows_outside_period"]]
    delivery = MappedDelivery(
        mapping=MAPPING,
        files=tuple(files),
        locations=tuple(locations),
        first_rows=tuple(accumulate((row["rows"] for row in per_file[:-1]), initial=0)),
        read_params={},
        row_params={
            "source_name": source_name,
            "period_label": f"{billing_period:%Y-%m}",
            "execution_id": execution_id,
            "source_format": source_format,
            "ingested_at": ingested_at,
        },
        category_rules=tuple(category_rules),
        currencies=tuple(sorted({currency for row in per_file for currency in row["currencies"]})),
        rows_outside_period=sum(row["rows_outside_period"] for row in per_file),
        file_outside_period=location_of.get(outside[0], outside[0]) if outside else None,
    )
    return delivery, sum(row["rows"] for row in per_file), sum((row["billed_cost"] for row in per_file), Decimal(0))
