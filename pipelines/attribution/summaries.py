"""Rebuilds a summary table (`run_costs`, `unattributed_costs`) only when what it is computed
from changed; the caller owns the transaction."""

import hashlib

import duckdb

from pipelines.attribution.allocate import ALLOCATIONS_STEP
from pipelines.warehouse.sql import read_sql
from pipelines.warehouse.step_inputs import WHOLE, step_inputs
from pipelines.warehouse.summaries import build_summary, summary_statement


def build_summary_if_changed(conn: duckdb.DuckDBPyConnection, name: str) -> bool:
    """Rebuilds the summary table `name` unless it was built from the same inputs, and records them.

    The inputs are the periods' allocation digests and allocation count, the run registry for
    `run_costs`, and the statement that builds the table (sql/ops/summary_inputs.sql): a night
    with nothing new reads no allocation for it.

    Args:
        conn: a writable warehouse connection, inside the caller's transaction.
        name: `run_costs` or `unattributed_costs` (its step in step_inputs).

    Returns:
        True when the table was rebuilt.
    """
    inputs = step_inputs(
        conn,
        name,
        WHOLE,
        read_sql("ops/summary_inputs", name),
        {
            "allocations_step": ALLOCATIONS_STEP,
            "definition": hashlib.sha256(summary_statement(name).encode()).hexdigest(),
        },
    )
    if inputs.unchanged(conn):
        return False
    build_summary(conn, name)
    inputs.record(conn)
    return True
