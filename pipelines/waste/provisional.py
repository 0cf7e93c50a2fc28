"""Writes `provisional_spend`: spend since each run's newest billed hour, estimated from its events,
and the ledger of the estimates the bill has covered since; the caller owns the transaction."""

import duckdb

from pipelines.warehouse.sql import read_sql
from pipelines.warehouse.step_inputs import build_if_changed, tables_inputs

# The tables the build reads besides its own: while their files are the same, the table stands
# (step_inputs): settling again settles nothing new, and the estimates come out the same.
PROVISIONAL_SPEND_INPUTS = ("cost_allocations", "run_events")


def build_provisional_spend_if_changed(conn: duckdb.DuckDBPyConnection) -> bool:
    """Settles and estimates again (`build_provisional_spend`) unless the table was built from
    the same tables (PROVISIONAL_SPEND_INPUTS, their files) and SQL, and records them.

    Args:
        conn: a writable warehouse connection on the lake, inside the caller's transaction.

    Returns:
        True when the table was rebuilt.
    """
    inputs = tables_inputs(
        conn, "provisional_spend", PROVISIONAL_SPEND_INPUTS, ("marts/provisional_spend", "schema/macros")
    )
    return build_if_changed(conn, inputs, lambda: build_provisional_spend(conn))


def build_provisional_spend(conn: duckdb.DuckDBPyConnection) -> int:
    """Settles the estimates the bill now covers (a billed row with the billed cost and the error),
    drops the other provisional rows and estimates each run's unbilled window again.

    Args:
        conn: a writable warehouse connection, inside the caller's transaction.

    Returns:
        The number of provisional rows written.
    """
    conn.execute(read_sql("marts/provisional_spend", "settle"))
    conn.execute(read_sql("marts/provisional_spend", "forget"))
    (rows,) = conn.execute(read_sql("marts/provisional_spend", "insert")).fetchone()
    return rows
