"""Writes `recommendations` and `recommendations_left_out`; the caller owns the transaction.

The listed price ratios of colder storage classes are data: `pipelines/data/storage_price_ratios.csv`
(provider, storage class, the glob of its SkuMeter, colder class, both listed prices, their ratio,
and where and when they were read).
"""

from __future__ import annotations

import duckdb

from pipelines.sources.mappings import DATA_DIR
from pipelines.warehouse.sql import read_sql
from pipelines.waste.settings import Waste

PRICE_RATIOS_FILE = DATA_DIR / "storage_price_ratios.csv"
MART_SQL = "marts/recommendations"


def build_recommendations(conn: duckdb.DuckDBPyConnection, settings: Waste) -> int:
    """Rebuilds `recommendations` and `recommendations_left_out` (sql/marts/recommendations.sql).

    Args:
        conn: a writable warehouse connection, inside the caller's transaction.
        settings: `waste:` (the globs naming checkpoint storage).

    Returns:
        The number of recommendations written.
    """
    conn.execute(read_sql(MART_SQL, "price_ratios"), {"file": str(PRICE_RATIOS_FILE)})
    conn.execute(read_sql(MART_SQL, "delete"))
    conn.execute(read_sql(MART_SQL, "checkpoints"))
    conn.execute(
        read_sql(MART_SQL, "checkpoint_storage"),
        {"checkpoint_resources": [pattern.lower() for pattern in settings.checkpoint_resources]},
    )
    conn.execute(read_sql(MART_SQL, "insert"))
    conn.execute(read_sql(MART_SQL, "left_out"))
    (rows,) = conn.execute(read_sql(MART_SQL, "count")).fetchone()
    return rows
