"""Writes `variance_causes`; the caller owns the transaction."""

import duckdb

from pipelines.warehouse.sql import read_sql
from pipelines.warehouse.step_inputs import build_if_changed, tables_inputs

# The tables the build reads: while their files are the same, the table stands (step_inputs).
VARIANCE_CAUSES_INPUTS = ("budget_baselines", "budget_variance", "run_pricing", "run_progress", "waste")


def build_variance_causes_if_changed(conn: duckdb.DuckDBPyConnection) -> bool:
    """Rebuilds `variance_causes` unless it was built from the same tables (VARIANCE_CAUSES_INPUTS,
    their files) and SQL, and records them.

    Args:
        conn: a writable warehouse connection on the lake, inside the caller's transaction.

    Returns:
        True when the table was rebuilt.
    """
    inputs = tables_inputs(conn, "variance_causes", VARIANCE_CAUSES_INPUTS, ("marts/variance_causes", "schema/macros"))
    return build_if_changed(conn, inputs, lambda: build_variance_causes(conn))


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
