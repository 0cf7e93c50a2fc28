"""The summary tables `run_costs` and `unattributed_costs`: small tables rebuilt whole from
`cost_allocations` (sql/marts/<name>.sql, statement `insert`), so a query reads them at once
instead of aggregating every allocation again. The caller owns the transaction."""

import duckdb

from pipelines.warehouse.sql import read_sql

RUN_COSTS, UNATTRIBUTED_COSTS = "run_costs", "unattributed_costs"
SUMMARIES = (RUN_COSTS, UNATTRIBUTED_COSTS)


def build_summary(conn: duckdb.DuckDBPyConnection, name: str) -> None:
    """Rebuilds the summary table `name` from the allocations now in the warehouse.

    Args:
        conn: a writable warehouse connection, inside the caller's transaction.
        name: `run_costs` or `unattributed_costs`.
    """
    conn.execute(read_sql(f"marts/{name}", "insert"))


def build_summaries(conn: duckdb.DuckDBPyConnection) -> None:
    """Rebuilds every summary table, e.g. after allocations were written outside the nightly job
    (a converted warehouse file)."""
    for name in SUMMARIES:
        build_summary(conn, name)
