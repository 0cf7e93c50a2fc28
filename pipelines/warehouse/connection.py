"""The DuckDB warehouse: schema bootstrap, connections and atomic writes."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import duckdb

from pipelines.warehouse.comments import apply_comments, execute_ddl
from pipelines.warehouse.sql import SQL_DIR, read_sql

# The tables first (they have no dependencies on each other), then the macros (table macros read
# tables, and DuckDB resolves those when a macro is created), then the views, which use both, in
# dependency order.
MACROS = "schema/macros"
VIEWS = ("marts/run_costs", "marts/unattributed_costs", "marts/reconciliation", "marts/waste_by_run")
# DuckDB keeps its working memory under this limit and spills the rest (large joins, sorts and
# aggregates) to a folder beside the warehouse, so memory stays flat as the bill grows. At
# 2.5 GiB a 10M-line period's attribution is no slower than at 3 GiB (69.5 s vs 75.5 s).
MEMORY_LIMIT = "2.5GiB"
SPILL_DIR_SUFFIX = ".spill"


def create_schema(conn: duckdb.DuckDBPyConnection) -> None:
    """Creates every table of `sql/schema/` and the macros, and (re)creates every public view, with
    their comments, in one transaction; idempotent."""
    with transaction(conn):
        comments = []
        for path in sorted(SQL_DIR.glob("schema/*.sql")):
            if path.stem != Path(MACROS).name:
                comments += execute_ddl(conn, read_sql(f"schema/{path.stem}"))
        conn.execute(read_sql(MACROS))
        for view in VIEWS:
            conn.execute(read_sql(view, "create"))
            comments += execute_ddl(conn, read_sql(view, "comments"))
        apply_comments(conn, comments)


def create_view(conn: duckdb.DuckDBPyConnection, path: str) -> None:
    """(Re)creates a public view (`sql/<path>.sql`, statement `create`) with its comments
    (statement `comments`), which replacing the view drops."""
    conn.execute(read_sql(path, "create"))
    apply_comments(conn, execute_ddl(conn, read_sql(path, "comments")))


# A reader's connection can change nothing and reach nothing but the warehouse, whatever SQL it
# is given: the engine refuses file and network access (COPY TO, read_csv, ATTACH, EXPORT,
# INSTALL/LOAD), loads no extension by itself, stores no secret, and its settings cannot be
# changed after it opened (so none of the above can be switched back on).
READER_LOCKS = {
    "enable_external_access": False,
    "autoinstall_known_extensions": False,
    "autoload_known_extensions": False,
    "allow_community_extensions": False,
    "allow_persistent_secrets": False,
    "lock_configuration": True,
}


def _settings(path: Path) -> dict[str, object]:
    return {
        "python_enable_replacements": False,
        "memory_limit": MEMORY_LIMIT,
        "temp_directory": str(path.with_name(path.name + SPILL_DIR_SUFFIX)),
    }


def connect(path: Path) -> duckdb.DuckDBPyConnection:
    """Opens the warehouse file for writing and makes sure the schema exists.

    Python variables are never visible to SQL (DuckDB's replacement scans are off): a name in a
    query means a warehouse table or view, nothing else. DuckDB works within MEMORY_LIMIT and
    spills to `<warehouse>.spill/`.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = duckdb.connect(str(path), config=_settings(path))
    create_schema(conn)
    return conn


def connect_read_only(path: Path) -> duckdb.DuckDBPyConnection:
    """Opens the warehouse file for reading, read-only by construction (READER_LOCKS).

    Raises:
        FileNotFoundError: there is no warehouse at `path` yet.
    """
    if not path.is_file():
        raise FileNotFoundError(f"warehouse {path} does not exist yet: run `runledger run` first")
    return duckdb.connect(str(path), read_only=True, config={**_settings(path), **READER_LOCKS})


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


@contextmanager
def unordered_inserts(conn: duckdb.DuckDBPyConnection) -> Iterator[duckdb.DuckDBPyConnection]:
    """Large inserts in the block need not keep their rows' order (sql/ops/session.sql):
    DuckDB then writes from every thread without buffering to restore the order, which is faster
    and stays within its memory limit. The connection's default order is back afterwards."""
    conn.execute(read_sql("ops/session", "unordered_inserts"))
    try:
        yield conn
    finally:
        conn.execute(read_sql("ops/session", "ordered_inserts"))
