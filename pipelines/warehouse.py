"""The DuckDB warehouse: schema bootstrap, connections and atomic writes."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import duckdb

from pipelines.sqlfiles import read_sql

TABLES = (
    "create_macros",
    "create_decimal_divide",
    "create_focus_line_items",
    "create_loads",
    "create_cost_allocations",
    "create_run_registry",
    "create_resource_tag_snapshots",
    "create_budget_baselines",
    "create_budget_variance",
    "create_budget_alerts",
)
VIEWS = ("run_costs", "unattributed_costs", "reconciliation")


def create_schema(conn: duckdb.DuckDBPyConnection) -> None:
    """Creates every public table and (re)creates every public view; idempotent."""
    for name in TABLES + VIEWS:
        conn.execute(read_sql(name))


def connect(path: Path, *, read_only: bool = False) -> duckdb.DuckDBPyConnection:
    """Opens the warehouse file; a writable connection also makes sure the schema exists.

    Python variables are never visible to SQL (DuckDB's replacement scans are off): a name in a
    query means a warehouse table or view, nothing else.
    """
    if read_only and not path.exists():
        raise FileNotFoundError(f"warehouse {path} does not exist yet: run `runledger run` first")
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = duckdb.connect(str(path), read_only=read_only, config={"python_enable_replacements": False})
    if not read_only:
        create_schema(conn)
    return conn


@contextmanager
def transaction(conn: duckdb.DuckDBPyConnection) -> Iterator[duckdb.DuckDBPyConnection]:
    """Runs the block in one transaction: all of it lands, or none of it."""
    conn.execute("begin transaction")
    try:
        yield conn
    except BaseException:
        conn.execute("rollback")
        raise
    conn.execute("commit")
