"""Writes `variance_causes`; the caller owns the transaction."""

import duckdb

from pipelines.warehouse.sql import read_sql


def build_variance_causes(conn: duckdb.DuckDBPyConnection) -> int:
    """Rebuilds `variance_causes`: each budgeted run's variance split into rate, usage and the
    other categories, rate into pricing mix and price, usage into idle, recompute, restart
    downtime, scope and throughput, every level summing exactly to its parent.

    Reads `budget_variance`, `budget_baselines`, `waste`, `run_progress` and `run_pricing`, so it
    runs after the steps that write them.

    Args:
        conn: a writable warehouse connection, inside the caller's transaction.

    Returns:
        The number of rows written.
    """
    conn.execute(read_sql("marts/variance_causes", "insert"))
    (rows,) = conn.execute(read_sql("marts/variance_causes", "count")).fetchone()
    return rows
