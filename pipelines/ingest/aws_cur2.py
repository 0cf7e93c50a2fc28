"""AWS CUR 2.0 (Data Exports, Parquet) normalized onto FOCUS 1.2 by DuckDB, straight from the files.

The mapping is SQL (`sql/staging/cur2_normalize.sql`): DuckDB reads the delivery's Parquet files,
computes the FOCUS columns and writes `focus_line_items` in one pass, without a copy of the rows
in Python or in a staging file. A legacy CUR delivery is first converted to CUR 2.0 columns
(`aws_legacy_cur`) and mapped the same way.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal
from itertools import accumulate
from pathlib import Path

import duckdb
import polars as pl

from connectors.errors import SourceError, missing_columns_error
from pipelines.ingest.focus_schema import SERVICE_CATEGORY_OF_COST_CATEGORY
from pipelines.ingest.mappings import DATA_DIR, RULE_COLUMNS, CategoryRule, glob_like
from pipelines.warehouse.connection import MEMORY_LIMIT
from pipelines.warehouse.sql import read_sql

REQUIRED_COLUMNS = (
    "bill_billing_period_start_date",
    "line_item_line_item_type",
    "line_item_unblended_cost",
    "line_item_usage_start_date",
    "line_item_usage_end_date",
    "line_item_currency_code",
)

# Cost and quantity columns the mapping reads (DECIMAL(38,10) in `cur2_columns`).
MONEY_COLUMNS = (
    "line_item_net_unblended_cost",
    "line_item_unblended_cost",
    "line_item_usage_amount",
    "pricing_public_on_demand_cost",
    "reservation_effective_cost",
    "reservation_net_effective_cost",
    "reservation_net_unused_amortized_upfront_fee_for_billing_period",
    "reservation_net_unused_recurring_fee",
    "reservation_unused_amortized_upfront_fee_for_billing_period",
    "reservation_unused_recurring_fee",
    "savings_plan_net_savings_plan_effective_cost",
    "savings_plan_savings_plan_effective_cost",
    "savings_plan_total_commitment_to_date",
    "savings_plan_used_commitment",
)


@dataclass(frozen=True)
class Cur2Delivery:
    """One billing period's CUR 2.0 files, what their rows are mapped with, and what a first read
    of them found (rows per file, currencies, rows of another period)."""

    files: tuple[Path, ...]
    locations: tuple[str | None, ...]
    first_rows: tuple[int, ...]
    source_name: str
    source_format: str
    billing_period: date
    execution_id: str
    category_rules: tuple[CategoryRule, ...]
    ingested_at: datetime
    currencies: tuple[str, ...]
    rows_outside_period: int
    file_outside_period: str | None

    def row_params(self) -> dict[str, object]:
        """The parameters of `cur2_focus_rows`."""
        return {
            "files": [str(file) for file in self.files],
            "source_name": self.source_name,
            "period_label": f"{self.billing_period:%Y-%m}",
            "execution_id": self.execution_id,
            "source_format": self.source_format,
            "ingested_at": self.ingested_at,
        }


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


def _memory_connection() -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB within the warehouse's memory limit; rows need no order (their
    x_LineItemKey numbers them), so a staging file is written as it is computed."""
    return duckdb.connect(
        config={"python_enable_replacements": False, "memory_limit": MEMORY_LIMIT, "preserve_insertion_order": False}
    )


def read_delivery(
    files: Sequence[Path],
    locations: Sequence[str | None],
    *,
    source_name: str,
    source_format: str,
    billing_period: date,
    execution_id: str,
    category_rules: Sequence[CategoryRule],
    ingested_at: datetime,
) -> tuple[Cur2Delivery, int, Decimal]:
    """Reads the delivery's files once (in an in-memory DuckDB) for the raw control totals: row
    count and Σ coalesce(net unblended, unblended), per file and in all.

    Args:
        files: the delivery's Parquet files, in delivery order.
        locations: where the user finds each file (an s3:// URI); None when its rows name their
            file in `_source_file` (a converted legacy delivery).
        source_name, source_format, billing_period, execution_id, category_rules, ingested_at:
            what the rows are mapped with (x_SourceName, x_SourceFormat, x_LineItemKey,
            x_CostCategory, x_IngestedAt).

    Returns:
        The delivery, its rows and its raw BilledCost.

    Raises:
        duckdb.Error: a cost or timestamp that is not one.
    """
    with _memory_connection() as conn:
        conn.execute(read_sql("staging/cur2_normalize"))
        result = conn.execute(
            read_sql("staging/cur2_delivery_totals"),
            {"files": [str(file) for file in files], "billing_period": billing_period},
        )
        names = [column[0] for column in result.description]
        by_file = {row["file"]: row for row in (dict(zip(names, values)) for values in result.fetchall())}
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
    delivery = Cur2Delivery(
        files=tuple(files),
        locations=tuple(locations),
        first_rows=tuple(accumulate((row["rows"] for row in per_file[:-1]), initial=0)),
        source_name=source_name,
        source_format=source_format,
        billing_period=billing_period,
        execution_id=execution_id,
        category_rules=tuple(category_rules),
        ingested_at=ingested_at,
        currencies=tuple(sorted({currency for row in per_file for currency in row["currencies"]})),
        rows_outside_period=sum(row["rows_outside_period"] for row in per_file),
        file_outside_period=location_of.get(outside[0], outside[0]) if outside else None,
    )
    return delivery, sum(row["rows"] for row in per_file), sum((row["billed_cost"] for row in per_file), Decimal(0))


def prepare(conn: duckdb.DuckDBPyConnection, delivery: Cur2Delivery) -> None:
    """Creates the mapping's temporary tables and macros on the connection and fills them for the
    delivery: its files, the GPU and service category mapping tables, and the cost and service
    category of each (service, usage type, charge category) it holds."""
    conn.execute(read_sql("staging/cur2_normalize"))
    conn.execute(
        read_sql("staging/cur2_lookups", "delivery_files"),
        {
            "files": [str(file) for file in delivery.files],
            "locations": list(delivery.locations),
            "first_rows": list(delivery.first_rows),
        },
    )
    conn.execute(
        read_sql("staging/cur2_lookups", "gpu_instance_types"), {"file": str(DATA_DIR / "gpu_instance_types.csv")}
    )
    conn.execute(
        read_sql("staging/cur2_lookups", "service_categories"), {"file": str(DATA_DIR / "aws_service_categories.csv")}
    )
    conn.execute(
        read_sql("staging/cur2_lookups", "cost_category_services"),
        {
            "cost_categories": list(SERVICE_CATEGORY_OF_COST_CATEGORY),
            "service_categories": list(SERVICE_CATEGORY_OF_COST_CATEGORY.values()),
        },
    )
    rules = delivery.category_rules
    conn.execute(
        read_sql("staging/cur2_lookups", "category_rules"),
        {
            **{column: [glob_like(rule.patterns[column]) for rule in rules] for column in RULE_COLUMNS},
            "cost_categories": [rule.cost_category for rule in rules],
        },
    )
    conn.execute(read_sql("staging/cur2_cost_categories"), {"files": [str(file) for file in delivery.files]})


def insert_focus_rows(conn: duckdb.DuckDBPyConnection, delivery: Cur2Delivery) -> None:
    """Inserts the delivery's rows into `focus_line_items`, mapped onto FOCUS (after `prepare`)."""
    conn.execute(read_sql("staging/focus_line_items", "insert_cur2"), delivery.row_params())


def stage_focus_rows(delivery: Cur2Delivery, target: Path) -> None:
    """Writes the delivery's FOCUS rows into a staging Parquet file, outside the warehouse."""
    with _memory_connection() as conn:
        prepare(conn, delivery)
        conn.execute(read_sql("staging/cur2_staged_rows"), {**delivery.row_params(), "target": str(target)})
