"""Writes `commitment_utilization`; the caller owns the transaction."""

import duckdb

from pipelines.warehouse.sql import read_sql
from pipelines.warehouse.step_inputs import build_if_changed, tables_inputs

# The tables the build reads: while their files are the same, the table stands (step_inputs).
COMMITMENT_UTILIZATION_INPUTS = ("cost_allocations", "focus_line_items")


def build_commitment_utilization_if_changed(conn: duckdb.DuckDBPyConnection) -> bool:
    """Rebuilds `commitment_utilization` unless it was built from the same tables
    (COMMITMENT_UTILIZATION_INPUTS, their files) and SQL, and records them.

    Args:
        conn: a writable warehouse connection on the lake, inside the caller's transaction.

    Returns:
        True when the table was rebuilt.
    """
    inputs = tables_inputs(
        conn, "commitment_utilization", COMMITMENT_UTILIZATION_INPUTS, ("marts/commitment_utilization", "schema/macros")
    )
    return build_if_changed(conn, inputs, lambda: build_commitment_utilization(conn))


def build_commitment_utilization(conn: duckdb.DuckDBPyConnection) -> None:
    """Rebuilds `commitment_utilization` from the commitments' line items and the allocations of
    their unused rows.

    Args:
        conn: a writable warehouse connection, inside the caller's transaction.
    """
    conn.execute(read_sql("marts/commitment_utilization", "insert"))
