"""Writes `provisional_spend`: spend since each run's newest billed hour, estimated from its events,
and the ledger of the estimates the bill has covered since; the caller owns the transaction."""

import duckdb

from pipelines.warehouse.sql import read_sql


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
