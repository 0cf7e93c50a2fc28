"""Writes `run_progress` and `run_pricing`; the caller owns the transaction."""

import duckdb

from pipelines.warehouse.sql import read_sql
from pipelines.warehouse.step_inputs import build_if_changed, tables_inputs

# The tables the build reads: while their files are the same, both tables stand (step_inputs).
RUN_PROGRESS_INPUTS = ("budget_baselines", "cost_allocations", "focus_line_items", "run_events")


def build_run_progress_if_changed(conn: duckdb.DuckDBPyConnection) -> bool:
    """Rebuilds `run_progress` and `run_pricing` unless they were built from the same tables
    (RUN_PROGRESS_INPUTS, their files) and SQL, and records them.

    Args:
        conn: a writable warehouse connection on the lake, inside the caller's transaction.

    Returns:
        True when the tables were rebuilt.
    """
    inputs = tables_inputs(
        conn, "run_progress", RUN_PROGRESS_INPUTS, ("marts/run_progress", "marts/run_pricing", "schema/macros")
    )
    return build_if_changed(conn, inputs, lambda: build_run_progress(conn))


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
