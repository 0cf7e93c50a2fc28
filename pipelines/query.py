"""`runledger query`: one read-only SQL statement on the lake, run by a confined child process.

The child (`python -m pipelines.query`) first asks the kernel to refuse it every file write
outside a fresh spill folder and every TCP connection the lake does not need
(`pipelines.warehouse.sandbox`), then opens a reader's connection, itself locked
(`connect_read_only`), runs the statement and streams the result back as Arrow IPC. Whatever
the SQL says, neither DuckDB nor an extension can then change a byte of the lake or anything
else, or reach another host. The parent only checks the statement's kind, for a clear message,
and formats the rows.
"""

from __future__ import annotations

import dataclasses
import json
import sqlite3
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from urllib.parse import urlparse

import duckdb
import pyarrow as pa

from pipelines.warehouse.connection import connect_read_only, require_readable
from pipelines.warehouse.lake import Lake, LakeError, install_extensions
from pipelines.warehouse.sandbox import SandboxUnavailable, confine

READ_STATEMENTS = {"SELECT", "EXPLAIN"}
POSTGRES_PORT = 5432
HTTP_PORT, HTTPS_PORT = 80, 443
# The child's exit codes: its error message is the last line of its stderr.
QUERY_REFUSED, SANDBOX_UNAVAILABLE = 2, 3


class QueryRefused(ValueError):
    """The statement cannot run read-only (or failed); the message says why (exit 2)."""


def query_failed(error: duckdb.Error) -> str:
    """DuckDB's message on one line (it spreads a syntax error over several, with a caret)."""
    return f"query failed: {' '.join(str(error).split())}"


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


def query_lake(lake: Lake, sql: str, at: int | datetime | None = None) -> pa.Table:
    """Runs one read-only statement on the lake in a confined child process.

    Raises:
        QueryRefused: the statement is not one read-only statement, or it failed.
        SandboxUnavailable: this kernel cannot confine the child (no Landlock).
        LakeError: the lake cannot be opened.
    """
    require_one_read_statement(sql)
    require_readable(lake)
    install_extensions(lake)
    with tempfile.TemporaryDirectory(prefix="runledger-query-") as spill, keep_wal_index(lake):
        request = {
            "lake": {**dataclasses.asdict(lake), "state_dir": str(lake.state_dir), "legacy_file": None},
            "sql": sql,
            "at": at.isoformat() if isinstance(at, datetime) else at,
            "spill": spill,
        }
        child = subprocess.run(
            [sys.executable, "-m", "pipelines.query"],
            input=json.dumps(request).encode(),
            capture_output=True,
            check=False,
        )
    message = child.stderr.decode(errors="replace").strip().splitlines()[-1:] or ["the query process failed"]
    if child.returncode == QUERY_REFUSED:
        raise QueryRefused(message[0])
    if child.returncode == SANDBOX_UNAVAILABLE:
        raise SandboxUnavailable(message[0])
    if child.returncode != 0:
        raise LakeError(message[0])
    return pa.ipc.open_stream(child.stdout).read_all()


def _serve(request: dict) -> None:
    """The child: confined first, then the one statement; its result to stdout as Arrow IPC."""
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
        table = conn.execute(request["sql"]).to_arrow_table()
    except duckdb.Error as error:
        print(query_failed(error), file=sys.stderr)
        sys.exit(QUERY_REFUSED)
    finally:
        conn.close()
    with pa.ipc.new_stream(sys.stdout.buffer, table.schema) as stream:
        stream.write_table(table)


if __name__ == "__main__":
    try:
        _serve(json.loads(sys.stdin.buffer.read()))
    except LakeError as error:
        print(str(error), file=sys.stderr)
        sys.exit(1)
