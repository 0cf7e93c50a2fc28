"""The DuckDB warehouse: schema bootstrap, connections and atomic writes."""

from __future__ import annotations

import fcntl
import os
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
    "create_allocation_inputs",
    "create_run_registry",
    "create_resource_tag_snapshots",
    "create_budget_baselines",
    "create_budget_variance",
    "create_budget_alerts",
    "create_run_events",
    "create_waste",
    "create_waste_inputs",
)
VIEWS = ("run_costs", "unattributed_costs", "reconciliation", "waste_by_run")
# DuckDB keeps its working memory under this limit and spills the rest (large joins, sorts and
# aggregates) to a folder beside the warehouse, so memory stays flat as the bill grows. At
# 2.5 GiB a 10M-line period's attribution is no slower than at 3 GiB (69.5 s vs 75.5 s).
MEMORY_LIMIT = "2.5GiB"
SPILL_DIR_SUFFIX = ".spill"


def create_schema(conn: duckdb.DuckDBPyConnection) -> None:
    """Creates every public table and (re)creates every public view; idempotent."""
    for name in TABLES + VIEWS:
        conn.execute(read_sql(name))


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
    """Large inserts in the block need not keep their rows' order (sql/session_unordered_inserts.sql):
    DuckDB then writes from every thread without buffering to restore the order, which is faster
    and stays within its memory limit. The connection's default order is back afterwards."""
    conn.execute(read_sql("session_unordered_inserts"))
    try:
        yield conn
    finally:
        conn.execute(read_sql("session_ordered_inserts"))


class RunInProgress(RuntimeError):
    """Another `runledger run` holds the warehouse's run lock (exit 1)."""


# Lock files this process holds, with how many blocks hold each: `runledger run` locks for the
# whole run, and each asset locks again around its writes (a Dagster step may be its own process).
_held_locks: dict[Path, int] = {}


@contextmanager
def run_lock(warehouse: Path) -> Iterator[Path]:
    """Holds an exclusive lock on `<warehouse>.lock` for the block; the operating system releases
    it when the process ends, however it ends, so a killed run never leaves a stale lock. Blocks
    of one process nest: only the outermost takes and releases the lock.

    Raises:
        RunInProgress: another process holds the lock; the message names the file and its pid.
    """
    lock_path = warehouse.with_name(warehouse.name + ".lock").absolute()
    if lock_path in _held_locks:
        _held_locks[lock_path] += 1
        try:
            yield lock_path
        finally:
            _held_locks[lock_path] -= 1
        return
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    with lock_path.open("a+") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = handle.read().strip() or "unknown"
            raise RunInProgress(
                f"another run is in progress (lock {lock_path} held by pid {holder}); wait for it to finish"
            ) from None
        handle.seek(0)
        handle.truncate()
        handle.write(str(os.getpid()))
        handle.flush()
        _held_locks[lock_path] = 1
        try:
            yield lock_path
        finally:
            del _held_locks[lock_path]
            handle.seek(0)
            handle.truncate()
            fcntl.flock(handle, fcntl.LOCK_UN)
