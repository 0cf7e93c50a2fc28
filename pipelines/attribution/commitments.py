"""Writes `commitment_utilization`; the caller owns the transaction."""

import duckdb

from pipelines.warehouse.sql import read_sql


def build_commitment_utilization(conn: duckdb.DuckDBPyConnection) -> None:
    """Rebuilds `commitment_utilization` from the commitments' line items and the allocations of
    their unused rows.

    Args:
        conn: a writable warehouse connection, inside the caller's transaction.
    """
    conn.execute(read_sql("marts/commitment_utilization", "insert"))
