"""Connections to the lake: a writer's (the nightly job) and a reader's (queries, reports,
checks), the schema bootstrap and atomic writes."""

from __future__ import annotations

import hashlib
import json
import time
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from datetime import UTC, datetime

import duckdb

from pipelines.warehouse.comments import apply_comments, execute_ddl
from pipelines.warehouse.lake import LAKE, Lake, LakeError, attach, open_duckdb
from pipelines.warehouse.sql import SQL_DIR, read_sql

# The tables first (they have no dependencies on each other), then the macros (table macros read
# tables, and DuckDB resolves those when a macro is created), then the views, which use both, in
# dependency order.
MACROS = "schema/macros"
VIEWS = ("marts/reconciliation", "marts/waste_by_run", "marts/cluster_usage", "marts/gpu_utilization_runs")
# DuckDB keeps its working memory under this limit and spills the rest (large joins, sorts and
# aggregates) to the lake's spill folder, so memory stays flat as the bill grows. At 2.5 GiB a
# 10M-line period's attribution is no slower than at 3 GiB (69.5 s vs 75.5 s).
MEMORY_LIMIT = "2.5GiB"
# What the bench changes, in its own processes only, to measure another memory limit or one
# DuckDB thread per process (`limit_duckdb`); empty otherwise.
_LIMITS: dict[str, object] = {}


def _schema_files() -> list[str]:
    return [f"schema/{path.stem}" for path in sorted(SQL_DIR.glob("schema/*.sql")) if f"schema/{path.stem}" != MACROS]


def schema_digest() -> str:
    """The digest of every statement that creates the schema: a lake built from the same text
    needs no change."""
    texts = [read_sql(path) for path in (*_schema_files(), MACROS)]
    texts += [read_sql(view, name) for view in VIEWS for name in ("create", "comments")]
    return hashlib.sha256("\n".join(texts).encode()).hexdigest()


def create_schema(conn: duckdb.DuckDBPyConnection, *, partitioned: bool = False) -> None:
    """Creates every table of `sql/schema/` and the macros, and (re)creates every public view, with
    their comments, in one transaction; idempotent.

    Args:
        conn: a lake's writer, or an in-memory DuckDB (the schema's documentation).
        partitioned: run the tables' `set partitioned by` statements (DuckLake only).
    """
    with transaction(conn):
        create_schema_statements(conn, partitioned=partitioned)


def create_schema_statements(conn: duckdb.DuckDBPyConnection, *, partitioned: bool) -> None:
    """`create_schema`'s statements, in the caller's transaction: a table that is missing is
    created, the others are left as they are."""
    comments = []
    for path in _schema_files():
        comments += execute_ddl(conn, read_sql(path), partitioned=partitioned)
    conn.execute(read_sql(MACROS))
    for view in VIEWS:
        conn.execute(read_sql(view, "create"))
        comments += execute_ddl(conn, read_sql(view, "comments"))
    apply_comments(conn, comments)
    if partitioned:
        conn.execute(read_sql("ops/schema_version", "forget"))
        conn.execute(
            read_sql("ops/schema_version", "record"),
            {"digest": schema_digest(), "applied_at": datetime.now(UTC).replace(tzinfo=None)},
        )


def _bring_schema_up_to_date(conn: duckdb.DuckDBPyConnection) -> None:
    """Creates or updates the lake's schema unless it is current. Writers opening a new lake at
    once all try: the later commits conflict, and their next attempt finds the schema current."""
    for attempt in transactions(conn):
        with attempt:
            if not _schema_is_current(conn):
                create_schema_statements(conn, partitioned=True)


def create_view(conn: duckdb.DuckDBPyConnection, path: str) -> None:
    """(Re)creates a public view (`sql/<path>.sql`, statement `create`) with its comments
    (statement `comments`), which replacing the view drops."""
    conn.execute(read_sql(path, "create"))
    apply_comments(conn, execute_ddl(conn, read_sql(path, "comments")))


def _schema_is_current(conn: duckdb.DuckDBPyConnection) -> bool:
    try:
        ((recorded,),) = conn.execute(read_sql("ops/schema_version", "recorded")).fetchall()
    except duckdb.CatalogException:
        return False
    return recorded == schema_digest()


def duckdb_limits() -> dict[str, object]:
    """The settings that bound every DuckDB this process opens: MEMORY_LIMIT, unless the bench
    changed it (`limit_duckdb`)."""
    return {"memory_limit": MEMORY_LIMIT, **_LIMITS}


def limit_duckdb(*, memory_limit: str | None = None, threads: int | None = None) -> None:
    """Internal, for the bench: the DuckDBs this process opens from now on work within
    `memory_limit` instead of MEMORY_LIMIT, and on `threads` threads instead of one per core
    (None leaves a setting as it is). Call it before the first connection."""
    if memory_limit is not None:
        _LIMITS["memory_limit"] = memory_limit
    if threads is not None:
        _LIMITS["threads"] = threads


def _settings(lake: Lake) -> dict[str, object]:
    lake.spill_dir.mkdir(parents=True, exist_ok=True)
    return {**duckdb_limits(), "temp_directory": str(lake.spill_dir)}


def require_current_format(lake: Lake) -> None:
    """Raises LakeError, naming `runledger migrate`, when the lake is a warehouse file of an earlier version."""
    if lake.legacy_file is not None:
        raise LakeError(
            f"{lake.legacy_file} is a warehouse file of an earlier RunLedger; convert it once into "
            f"{lake.migration_target.describe()} with `runledger migrate` (nothing is lost: the file is kept as it is)"
        )


def missing_lake(lake: Lake) -> LakeError:
    return LakeError(f"{lake.describe()} does not exist yet: run `runledger run` first")


def require_readable(lake: Lake) -> None:
    """Raises LakeError, saying what to run, when there is no lake yet or only a warehouse file of
    an earlier version."""
    require_current_format(lake)
    if not lake.exists():
        raise missing_lake(lake)


# A write that conflicts with another process's commit is run again, up to this many times,
# waiting 0.5 s, 1 s, 2 s … in between.
CONFLICT = "Transaction conflict"
CONFLICT_ATTEMPTS = 8
CONFLICT_BACKOFF_SECONDS = 0.5
# What DuckLake says when another process created the catalog's tables while it was creating them.
NEW_CATALOG, ALREADY_CREATED = "Failed to initialize DuckLake", "already exists"

# The lake this process has open, by (lake, role): loading the lake's extensions costs about
# 0.2 s (their signatures are checked), so the connections of one process to one lake are cursors
# of one in-memory DuckDB. One stays open: each has its own memory limit, and a writer and a
# reader open at once could use twice MEMORY_LIMIT.
_OPEN: OrderedDict[tuple[Lake, str], tuple[duckdb.DuckDBPyConnection, tuple[int, int] | None]] = OrderedDict()
MAX_OPEN_LAKES = 1
WRITER, READER = "writer", "reader"


def _catalog_identity(lake: Lake) -> tuple[int, int] | None:
    """The catalog file's device and inode: a lake deleted and created again at the same path is
    another lake."""
    if lake.sqlite_file is None or not lake.sqlite_file.exists():
        return None
    stat = lake.sqlite_file.stat()
    return stat.st_dev, stat.st_ino


def _attach(conn: duckdb.DuckDBPyConnection, lake: Lake, *, read_only: bool, at: int | datetime | None) -> None:
    """`attach`, again when the catalog was being created by another process at that moment:
    writers opening a new PostgreSQL catalog at once each create DuckLake's tables, and all but the
    first fail on a name the first just created; attached again, they find the lake created."""
    for number in range(CONFLICT_ATTEMPTS):
        try:
            attach(conn, lake, read_only=read_only, at=at)
            return
        except duckdb.Error as error:
            racing = NEW_CATALOG in str(error) and ALREADY_CREATED in str(error)
            if not racing or number == CONFLICT_ATTEMPTS - 1:
                raise
        time.sleep(CONFLICT_BACKOFF_SECONDS * 2**number)


def _open(lake: Lake, role: str, at: int | datetime | None = None) -> duckdb.DuckDBPyConnection:
    # A reader loads the lake's extensions without DuckDB checking their signatures again (about
    # 0.2 s each, most of what a `runledger query` or `report` waits for): they are the files
    # installed into RunLedger's own extension folder from their packages, as trusted as DuckDB's
    # own library beside them, and the reader loads no other extension (`lock_reader`).
    conn = open_duckdb(lake, {**_settings(lake), "allow_unsigned_extensions": role == READER})
    try:
        try:
            _attach(conn, lake, read_only=role == READER, at=at)
        except duckdb.InvalidInputException as error:
            if role == READER and "creating a new DuckLake is explicitly disabled" in str(error):
                raise missing_lake(lake) from None
            if at is not None and "No snapshot found" in str(error):
                raise LakeError(
                    f"{lake.describe()} has no snapshot {'with id' if isinstance(at, int) else 'at or before'} {at} "
                    "(older ones are expired after orchestration.snapshot_retention_days); list the snapshots with "
                    'runledger query "select snapshot_id, snapshot_time, commit_message from lake.snapshots()"'
                ) from None
            raise
        if role == WRITER:
            _bring_schema_up_to_date(conn)
        if role == READER:
            lock_reader(conn, lake)
    except BaseException:
        conn.close()
        raise
    return conn


def _cursor(lake: Lake, role: str) -> duckdb.DuckDBPyConnection:
    key = (lake, role)
    cached = _OPEN.pop(key, None)
    if cached is not None and cached[1] != _catalog_identity(lake):
        cached[0].close()
        cached = None
    if cached is None:
        conn = _open(lake, role)
        cached = (conn, _catalog_identity(lake))
    _OPEN[key] = cached
    while len(_OPEN) > MAX_OPEN_LAKES:
        _OPEN.popitem(last=False)[1][0].close()
    cursor = cached[0].cursor()
    cursor.execute(f"use {LAKE}")
    return cursor


def connect(lake: Lake) -> duckdb.DuckDBPyConnection:
    """A writable connection to the lake, its schema created or brought up to date first.

    The lake is the connection's default catalog: a name in a query means one of its tables or
    views. DuckDB works within MEMORY_LIMIT (`duckdb_limits`) and spills to the lake's spill folder.

    Raises:
        LakeError: the lake holds a warehouse file of an earlier version (`runledger migrate`).
    """
    require_current_format(lake)
    if lake.sqlite_file:
        lake.sqlite_file.parent.mkdir(parents=True, exist_ok=True)
    return _cursor(lake, WRITER)


def lock_reader(conn: duckdb.DuckDBPyConnection, lake: Lake) -> None:
    """Locks a reader's connection: from now on DuckDB reaches no file but the lake's data files
    and its spill folder, loads no extension, and none of that can be switched back on (the
    configuration is locked)."""
    conn.execute("set allowed_directories = $folders", {"folders": [lake.data_path, f"{lake.spill_dir}/"]})
    conn.execute("set enable_external_access = false")
    conn.execute("set lock_configuration = true")


def connect_read_only(lake: Lake, at: int | datetime | None = None) -> duckdb.DuckDBPyConnection:
    """A reader's connection to the lake: attached read-only and locked (`lock_reader`).

    Args:
        lake: the lake.
        at: a snapshot id or a moment: the lake as it was then.

    Raises:
        LakeError: there is no lake yet, or only a warehouse file of an earlier version.
    """
    require_readable(lake)
    return _cursor(lake, READER) if at is None else _open(lake, READER, at)


def on_a_lake(conn: duckdb.DuckDBPyConnection) -> bool:
    """True when the connection's database is the lake (not an in-memory DuckDB or a warehouse file)."""
    ((kind,),) = conn.execute(read_sql("ops/snapshots", "catalog_type")).fetchall()
    return kind == "ducklake"


def describe_commit(conn: duckdb.DuckDBPyConnection, message: str, **extra: str) -> None:
    """Names the snapshot the running transaction will commit (`lake.snapshots()` shows it), with
    `extra` as JSON beside it; nothing off a lake (an in-memory DuckDB)."""
    if on_a_lake(conn):
        conn.execute(read_sql("ops/snapshots", "describe_commit"), {"message": message, "extra": json.dumps(extra)})


def committed_snapshot(conn: duckdb.DuckDBPyConnection) -> int | None:
    """The snapshot this connection's last transaction committed (None off a lake)."""
    if not on_a_lake(conn):
        return None
    ((snapshot,),) = conn.execute(read_sql("ops/snapshots", "last_committed")).fetchall()
    return snapshot


@contextmanager
def transaction(conn: duckdb.DuckDBPyConnection) -> Iterator[duckdb.DuckDBPyConnection]:
    """Runs the block in one transaction: all of it lands, or none of it."""
    conn.execute("begin transaction")
    try:
        yield conn
    except BaseException:
        conn.execute("rollback")
        raise
    try:
        conn.execute("commit")
    except duckdb.Error:
        with suppress(duckdb.Error):  # a failed commit may have ended the transaction already
            conn.execute("rollback")
        raise


class _Attempt:
    """One attempt of a transaction (`transactions`): a conflict with a write another process
    committed meanwhile is caught and counted, anything else propagates."""

    def __init__(self, conn: duckdb.DuckDBPyConnection, last: bool) -> None:
        self._transaction = transaction(conn)
        self._last = last
        self.conflicted = False

    def __enter__(self) -> duckdb.DuckDBPyConnection:
        return self._transaction.__enter__()

    def __exit__(self, kind: type | None, error: BaseException | None, trace: object) -> bool:
        try:
            self._transaction.__exit__(kind, error, trace)
        except duckdb.TransactionException as conflict:
            if self._last or CONFLICT not in str(conflict):
                raise
            self.conflicted = True
            return True
        return False


def transactions(conn: duckdb.DuckDBPyConnection) -> Iterator[_Attempt]:
    """The attempts of one transaction, for `for attempt in transactions(conn): with attempt: …`:
    the block runs in a transaction, and runs again, from the start, when the lake reports that
    another process committed a write to the same table meanwhile (DuckLake checks conflicts per
    table: two billing periods of one table written at once conflict). The block must be a
    replacement that can run again: it is, everywhere RunLedger writes."""
    for number in range(CONFLICT_ATTEMPTS):
        attempt = _Attempt(conn, last=number == CONFLICT_ATTEMPTS - 1)
        yield attempt
        if not attempt.conflicted:
            return
        time.sleep(CONFLICT_BACKOFF_SECONDS * 2**number)


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
