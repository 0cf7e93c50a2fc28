"""Writes the `waste` table; the caller owns the transaction."""

import duckdb

from pipelines.config import Waste
from pipelines.sqlfiles import read_sql


def build_waste(conn: duckdb.DuckDBPyConnection, settings: Waste) -> int:
    """Rebuilds `waste` from the attributed spend, budgets, registry and run events.

    Args:
        conn: a writable warehouse connection, inside the caller's transaction.
        settings: the `waste:` section of the configuration (checkpoint and transfer globs).

    Returns:
        The number of waste items written.
    """
    conn.execute(
        read_sql("waste"),
        {
            "checkpoint_resources": [pattern.lower() for pattern in settings.checkpoint_resources],
            "inter_region_transfer": [pattern.lower() for pattern in settings.inter_region_transfer],
        },
    )
    (rows,) = conn.execute(read_sql("waste_count")).fetchone()
    return rows
