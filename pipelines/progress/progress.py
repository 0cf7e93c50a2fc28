"""Writes `run_progress` and `run_pricing`; the caller owns the transaction."""

import duckdb

from pipelines.warehouse.sql import read_sql


def build_run_progress(conn: duckdb.DuckDBPyConnection) -> int:
    """Rebuilds `run_progress` from the run events, budget baselines and attributed spend, and
    `run_pricing` from the allocations with GPU-hours and their line items' pricing.

    Args:
        conn: a writable warehouse connection, inside the caller's transaction.

    Returns:
        The number of `run_progress` rows written.
    """
    conn.execute(read_sql("marts/run_progress", "insert"))
    conn.execute(read_sql("marts/run_pricing", "insert"))
    (rows,) = conn.execute(read_sql("marts/run_progress", "count")).fetchone()
    return rows
