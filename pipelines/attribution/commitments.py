"""Writes `commitment_utilization`; the caller owns the transaction."""

import duckdb

from pipelines.warehouse.sql import read_sql


def build_commitment_utilization(conn: duckdb.DuckDBPyConnection) -> list[tuple]:
    """Rebuilds `commitment_utilization` from the commitments' line items and the allocations of
    their unused rows.

    Args:
        conn: a writable warehouse connection, inside the caller's transaction.

    Returns:
        Its rows as `summary` (sql/marts/commitment_utilization.sql) reads them: billing period,
        type, id, currency, committed, unused, unused charged to runs, utilization, coverage.
    """
    conn.execute(read_sql("marts/commitment_utilization", "insert"))
    return conn.execute(read_sql("marts/commitment_utilization", "summary")).fetchall()
