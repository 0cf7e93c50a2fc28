"""Writes `recommendations` and `recommendations_left_out`; the caller owns the transaction.

The listed price ratios of colder storage classes are data: `pipelines/data/storage_price_ratios.csv`
(provider, storage class, the glob of its SkuMeter, colder class, both listed prices, their ratio,
and where and when they were read).
"""

from __future__ import annotations

import csv
from decimal import Decimal
from functools import cache
from pathlib import Path

import duckdb
import pyarrow as pa

from pipelines.warehouse.sql import read_sql
from pipelines.waste.settings import Waste

PRICE_RATIOS_FILE = Path(__file__).resolve().parent.parent / "data" / "storage_price_ratios.csv"
PRICE_RATIOS_TABLE = "storage_price_ratios"
MART_SQL = "marts/recommendations"


PRICE_RATIOS_SCHEMA = pa.schema(
    [
        ("provider", pa.string()),
        ("storage_class", pa.string()),
        ("meter", pa.string()),
        ("colder_class", pa.string()),
        ("price_ratio", pa.decimal128(38, 10)),
        ("retrieved", pa.string()),
    ]
)
"""What the SQL reads of storage_price_ratios.csv: meters lower-cased (it matches lower-case
SkuMeters), the ratio as an exact decimal."""


@cache
def storage_price_ratios() -> pa.Table:
    """The listed price ratios of colder storage classes (PRICE_RATIOS_SCHEMA)."""
    with PRICE_RATIOS_FILE.open(newline="") as handle:
        rows = [
            {
                **{column: row[column] for column in PRICE_RATIOS_SCHEMA.names},
                "meter": row["meter"].lower(),
                "price_ratio": Decimal(row["price_ratio"]),
            }
            for row in csv.DictReader(handle)
        ]
    return pa.Table.from_pylist(rows, schema=PRICE_RATIOS_SCHEMA)


def build_recommendations(conn: duckdb.DuckDBPyConnection, settings: Waste) -> int:
    """Rebuilds `recommendations` and `recommendations_left_out` (sql/marts/recommendations.sql).

    Args:
        conn: a writable warehouse connection, inside the caller's transaction.
        settings: `waste:` (the globs naming checkpoint storage).

    Returns:
        The number of recommendations written.
    """
    conn.register(PRICE_RATIOS_TABLE, storage_price_ratios())
    try:
        conn.execute(read_sql(MART_SQL, "delete"))
        conn.execute(read_sql(MART_SQL, "checkpoints"))
        conn.execute(
            read_sql(MART_SQL, "checkpoint_storage"),
            {"checkpoint_resources": [pattern.lower() for pattern in settings.checkpoint_resources]},
        )
        conn.execute(read_sql(MART_SQL, "insert"))
        conn.execute(read_sql(MART_SQL, "left_out"))
    finally:
        conn.unregister(PRICE_RATIOS_TABLE)
    (rows,) = conn.execute(read_sql(MART_SQL, "count")).fetchone()
    return rows
