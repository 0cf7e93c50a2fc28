"""`runledger query`: one read-only SQL statement on the lake, run by a confined child process.

The child (`python -m pipelines.query`) first asks the kernel to refuse it every file write
outside a fresh spill folder and every TCP connection the lake does not need
(`pipelines.warehouse.sandbox`), then opens a reader's connection, itself locked
(`connect_read_only`), runs the statement and streams the result back batch by batch, as lines
of JSON whose values keep their type (`_encoded`, `_decoded`): plain data, nothing the
parent runs. Whatever the SQL says, neither DuckDB nor an extension can then change a byte of the lake
or anything else, or reach another host. The parent only checks the statement's kind, for a
clear message, and formats the rows as they arrive; whatever ends it (the last row, a signal,
`--timeout`, a closed stdout), it stops and reaps the child and removes the spill folder.
"""

from __future__ import annotations

import base64
import ctypes
import dataclasses
import json
import os
import signal
import sqlite3
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import date, datetime, time, timedelta
from decimal import Decimal
from pathlib import Path
from typing import IO
from urllib.parse import urlparse
from uuid import UUID

import duckdb

from pipelines.warehouse.connection import connect_read_only, require_readable
from pipelines.warehouse.lake import Lake, LakeError, install_extensions
from pipelines.warehouse.repair import explain_file_error
from pipelines.warehouse.sandbox import SandboxUnavailable, confine

READ_STATEMENTS = {"SELECT", "EXPLAIN"}
POSTGRES_PORT = 5432
HTTP_PORT, HTTPS_PORT = 80, 443
# The child's exit codes: its error message is the last line of its stderr.
QUERY_REFUSED, SANDBOX_UNAVAILABLE = 2, 3
# Rows per batch the child sends: the parent holds about one batch at a time.
BATCH_ROWS = 10_000
PR_SET_PDEATHSIG = 1
# What stops a query: a signal to stop (its child and spill folder go with it), or --timeout.
STOPPING_SIGNALS = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT, signal.SIGALRM)


class QueryRefused(ValueError):
    """The statement cannot run read-only (or failed); the message says why (exit 2)."""


def query_failed(error: Exception) -> str:
    """DuckDB's message on one line (it spreads a syntax error over several, with a caret); a
    lost or damaged lake file named with its table, period and repair."""
    return explain_file_error(error) or f"query failed: {' '.join(str(error).split())}"


def require_one_read_statement(sql: str) -> None:
    """Refuses, with a message saying why, what the confined reader would refuse anyway (writes,
    file access, settings) and what it would run but not show (all but the last of several
    statements).

    Raises:
        QueryRefused: not exactly one SELECT or EXPLAIN statement, or SQL that does not parse.
    """
    try:
        statements = duckdb.connect(":memory:").extract_statements(sql)
    except duckdb.Error as error:
        raise QueryRefused(query_failed(error)) from None
    if len(statements) != 1:
        raise QueryRefused(
            f"runledger query runs exactly one statement; got {len(statements)} (run them one at a time)"
        )
    kind = statements[0].type.name
    if kind not in READ_STATEMENTS:
        raise QueryRefused(f"runledger query runs one read-only SELECT (or EXPLAIN) statement; got {kind}")


def tcp_ports(lake: Lake) -> list[int]:
    """The ports the lake's reader must reach: its PostgreSQL catalog, its object store."""
    ports = []
    if lake.sqlite_file is None:
        settings = dict(item.split("=", 1) for item in lake.catalog.removeprefix("postgres:").split())
        ports.append(int(settings.get("port", POSTGRES_PORT)))
    if lake.on_s3:
        endpoint = urlparse(f"//{lake.s3_endpoint}") if lake.s3_endpoint else None
        default_port = HTTPS_PORT if lake.s3_use_ssl else HTTP_PORT
        ports.append(endpoint.port if endpoint and endpoint.port else default_port)
    return ports


@contextmanager
def keep_wal_index(lake: Lake) -> Iterator[None]:
    """Keeps the SQLite catalog's write-ahead log and its index (`-wal`, `-shm`) in place while the
    child reads: SQLite creates them when the first connection opens the catalog, which the
    confined child may not do; a connection of this process, idle, makes sure they exist."""
    if lake.sqlite_file is None or not lake.sqlite_file.exists():
        yield
        return
    keeper = sqlite3.connect(f"{lake.sqlite_file.as_uri()}?mode=ro", uri=True)
    try:
        keeper.execute("select count(*) from sqlite_master").fetchall()
        yield
    finally:
        keeper.close()


class QueryStopped(Exception):
    """A signal (SIGTERM, SIGHUP, SIGINT) stopped the query; the exit code is 128 + its number."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


@contextmanager
def stopped_by_signals(timeout: float | None) -> Iterator[None]:
    """Turns SIGTERM, SIGHUP and SIGINT into `QueryStopped`, and `timeout` seconds into
    `QueryRefused`, raised wherever the block is (waiting for rows or for the terminal), so that
    `query_lake` stops its child and removes its spill folder on the way out. Only the first of
    them raises: the cleanup is not interrupted by a second. Main thread only.

    Args:
        timeout: seconds the block may take; None or 0 for no limit.
    """
    raised = False

    def stop(signum: int, _frame: object) -> None:
        nonlocal raised
        if raised:
            return
        raised = True
        if signum == signal.SIGALRM:
            raise QueryRefused(
                f"the query ran past --timeout {timeout:g} s and was stopped: narrow it (a where, a limit) "
                "or give a longer --timeout (0: no limit)"
            )
        raise QueryStopped(signum)

    previous = {signum: signal.signal(signum, stop) for signum in STOPPING_SIGNALS}
    if timeout:
        signal.setitimer(signal.ITIMER_REAL, timeout)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        for signum, handler in previous.items():
            signal.signal(signum, handler)


@dataclasses.dataclass(frozen=True)
class QueryResult:
    """The rows of a running query, as they arrive.

    Attributes:
        columns: the result's column names.
        rows: its rows as they arrive, in order (a DECIMAL or HUGEINT as a `Decimal`, a struct or
            map as a dict); exhausting it checks that the query ended well (it raises as
            `query_lake` does when it did not).
    """

    columns: list[str]
    rows: Iterator[tuple]


@contextmanager
def query_lake(lake: Lake, sql: str, at: int | datetime | None = None) -> Iterator[QueryResult]:
    """Runs one read-only statement on the lake in a confined child process, its rows streamed as
    the child produces them (memory stays flat whatever the result's size). Leaving the block, by
    the end of the rows or by any exception (a signal, a closed stdout), stops and reaps the child
    and removes its spill folder.

    Raises:
        QueryRefused: the statement is not one read-only statement, or it failed.
        SandboxUnavailable: this kernel cannot confine the child (no Landlock).
        LakeError: the lake cannot be opened.
    """
    require_one_read_statement(sql)
    require_readable(lake)
    install_extensions(lake)
    with (
        tempfile.TemporaryDirectory(prefix="runledger-query-") as spill,
        tempfile.TemporaryFile() as errors,
        keep_wal_index(lake),
    ):
        request = {
            "lake": {**dataclasses.asdict(lake), "state_dir": str(lake.state_dir), "legacy_file": None},
            "sql": sql,
            "at": at.isoformat() if isinstance(at, datetime) else at,
            "spill": spill,
            "parent": os.getpid(),
        }
        child = None
        try:
            # a signal that stops the query waits until the child is known here, so that it stops
            # the child too
            unblocked = signal.pthread_sigmask(signal.SIG_BLOCK, STOPPING_SIGNALS)
            try:
                # a session of its own: a terminal's Ctrl-C reaches this process, which stops the child
                child = subprocess.Popen(
                    [sys.executable, "-m", "pipelines.query"],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=errors,
                    start_new_session=True,
                )
            finally:
                signal.pthread_sigmask(signal.SIG_SETMASK, unblocked)
            with child.stdin:
                child.stdin.write(json.dumps(request).encode())
            header = _read_line(child.stdout)
            if header is None:
                _require_success(child, errors)
                raise LakeError("the query process ended without a result")
            yield QueryResult(header, _rows(child, errors))
        finally:
            if child is not None:
                if child.poll() is None:
                    child.kill()
                child.wait()
                child.stdout.close()


def _read_line(stream: IO[bytes]) -> list | None:
    """The next line the child wrote, decoded; None at the end or a line cut short (the child's
    exit code says why)."""
    line = stream.readline()
    if not line.endswith(b"\n"):
        return None
    return json.loads(line, object_hook=_decoded)


def _rows(child: subprocess.Popen, errors: IO[bytes]) -> Iterator[tuple]:
    while (batch := _read_line(child.stdout)) is not None:
        yield from map(tuple, batch)
    _require_success(child, errors)


def _require_success(child: subprocess.Popen, errors: IO[bytes]) -> None:
    """Raises, with the child's message (the last line of its stderr), when it failed."""
    if child.wait() == 0:
        return
    errors.seek(0)
    message = errors.read().decode(errors="replace").strip().splitlines()[-1:] or [
        f"the query process failed (exit code {child.returncode})"
    ]
    if child.returncode == QUERY_REFUSED:
        raise QueryRefused(message[0])
    if child.returncode == SANDBOX_UNAVAILABLE:
        raise SandboxUnavailable(message[0])
    raise LakeError(message[0])


def _die_with_parent(parent: int) -> None:
    """Asks the kernel to kill this process when its parent dies, even by SIGKILL (which no
    handler of the parent sees); exits now when the parent is already gone."""
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:
        sys.exit(1)


# How a value that JSON has no type for travels from the child (`_encoded`): an object of one
# key, the tag, its value in JSON; every JSON object of the stream is one of these.
_DECODERS: dict[str, Callable[[object], object]] = {
    "d": Decimal,
    "D": date.fromisoformat,
    "T": datetime.fromisoformat,
    "t": time.fromisoformat,
    "i": lambda parts: timedelta(*parts),
    "b": base64.b64decode,
    "s": dict,  # a struct: its fields as [name, value] pairs, in order
    "m": dict,  # a map: its entries as [key, value] pairs (a key of any type)
}


def _decoded(tagged: dict) -> object:
    ((tag, value),) = tagged.items()
    return _DECODERS[tag](value)


def _tagged(value: object) -> dict | str:
    """A value of a row that JSON has no type for, as `_decoded` reads it back."""
    if isinstance(value, Decimal):
        return {"d": str(value)}  # exact, its scale kept (0E-10 reads back as 0E-10)
    if isinstance(value, datetime):
        return {"T": value.isoformat()}
    if isinstance(value, date):
        return {"D": value.isoformat()}
    if isinstance(value, time):
        return {"t": value.isoformat()}
    if isinstance(value, timedelta):
        return {"i": [value.days, value.seconds, value.microseconds]}
    if isinstance(value, bytes):
        return {"b": base64.b64encode(value).decode()}
    if isinstance(value, UUID):
        return str(value)
    raise TypeError(f"a value of type {type(value).__name__} cannot be sent")


def _converter(column_type: duckdb.typing.DuckDBPyType) -> Callable[[object], object] | None:
    """What a value of `column_type` becomes before it is written (None: as DuckDB returns it):
    a HUGEINT a `Decimal` (a sum of integers may not fit a float or JSON reader's number), a
    struct or map its pairs, tagged."""
    kind = column_type.id
    if kind in ("hugeint", "uhugeint"):
        return Decimal
    if kind in ("list", "array"):
        item = _converter(column_type.children[0][1])
        return None if item is None else lambda values: [item(v) if v is not None else None for v in values]
    if kind == "struct":
        fields = {name: _converter(child) for name, child in column_type.children}
        return lambda values: {
            "s": [[k, fields[k](v) if fields[k] and v is not None else v] for k, v in values.items()]
        }
    if kind == "map":
        key, item = (_converter(child) for _, child in column_type.children)
        return lambda values: {
            "m": [[key(k) if key else k, item(v) if item and v is not None else v] for k, v in values.items()]
        }
    return None


def _encoded(rows: list[tuple], converters: list[Callable[[object], object] | None]) -> bytes:
    """Rows as one line of JSON, each value of a type JSON lacks tagged (`_tagged`)."""
    if any(converters):
        rows = [
            [value if convert is None or value is None else convert(value) for value, convert in zip(row, converters)]
            for row in rows
        ]
    return json.dumps(rows, default=_tagged, ensure_ascii=False).encode() + b"\n"


def _serve(request: dict) -> None:
    """The child: confined first, then the one statement; its column names, then its rows, to
    stdout, a line of JSON per batch as DuckDB produces them."""
    signal.pthread_sigmask(signal.SIG_UNBLOCK, STOPPING_SIGNALS)  # blocked by the parent while it started this
    _die_with_parent(request["parent"])
    spill = Path(request["spill"])
    lake_fields = request["lake"]
    lake = Lake(**{**lake_fields, "state_dir": spill, "legacy_file": None})
    try:
        confine(spill, tcp_ports(lake))
    except SandboxUnavailable as error:
        print(
            f"runledger query runs SQL only inside the kernel's sandbox, and {error}; query the lake from DuckDB "
            "directly instead (docs/operations.md, Ad-hoc SQL)",
            file=sys.stderr,
        )
        sys.exit(SANDBOX_UNAVAILABLE)
    at = request["at"]
    conn = connect_read_only(lake, datetime.fromisoformat(at) if isinstance(at, str) else at)
    try:
        cursor = conn.execute(request["sql"])
        converters = [_converter(column_type) for _, column_type, *_ in cursor.description]
        out = sys.stdout.buffer
        out.write(json.dumps([name for name, *_ in cursor.description]).encode() + b"\n")
        while rows := cursor.fetchmany(BATCH_ROWS):
            out.write(_encoded(rows, converters))
            out.flush()
    except (duckdb.Error, TypeError) as error:
        print(query_failed(error), file=sys.stderr)
        sys.exit(QUERY_REFUSED)
    finally:
        conn.close()


if __name__ == "__main__":
    try:
        _serve(json.loads(sys.stdin.buffer.read()))
    except LakeError as error:
        print(str(error), file=sys.stderr)
        sys.exit(1)
