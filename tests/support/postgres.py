"""A throwaway PostgreSQL cluster on 127.0.0.1 for the tests of the lake's PostgreSQL catalog.

Debian's `postgresql` package provides the server (the Makefile installs it where it can);
`initdb` refuses to run as root, so as root the cluster belongs to the `postgres` user.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

SERVER_USER = "postgres"
DATABASE = "runledger_lake"


@dataclass(frozen=True)
class PostgresServer:
    """A running cluster: where to reach it, and the database the lake's catalog lives in."""

    host: str
    port: int
    user: str
    dbname: str


def _bin_dir() -> Path | None:
    found = shutil.which("pg_ctl")
    if found:
        return Path(found).resolve().parent
    versions = sorted(Path("/usr/lib/postgresql").glob("*/bin/pg_ctl"))
    return versions[-1].parent if versions else None


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _as_server_user(command: list[str]) -> list[str]:
    return ["runuser", "-u", SERVER_USER, "--", *command] if os.geteuid() == 0 else command


def new_database(server: PostgresServer, name: str) -> str:
    """Creates an empty database on the server (one per test: a lake's catalog each) and returns
    its name."""
    bin_dir = _bin_dir()
    subprocess.run(
        [str(bin_dir / "createdb"), "-h", server.host, "-p", str(server.port), "-U", server.user, name],
        check=True,
        capture_output=True,
    )
    return name


def psql(server: PostgresServer, dbname: str, sql: str) -> str:
    """Runs SQL with psql as the server's superuser and returns its output."""
    command = [str(_bin_dir() / "psql"), "-h", server.host, "-p", str(server.port), "-U", server.user]
    done = subprocess.run([*command, "-d", dbname, "-At", "-c", sql], check=True, capture_output=True, text=True)
    return done.stdout


def installed() -> bool:
    """Whether PostgreSQL's server programs are on this machine."""
    return _bin_dir() is not None


@contextmanager
def local_cluster() -> Iterator[PostgresServer]:
    """A throwaway cluster (trust authentication, 127.0.0.1 only, a free port) holding an empty
    database, stopped and removed afterwards. The bench's team-setup lake uses it too."""
    bin_dir = _bin_dir()
    if bin_dir is None:
        raise RuntimeError("PostgreSQL is not installed: `make test` installs Debian's postgresql package (as root)")
    # outside pytest's own temporary folder, which only its owner may enter
    root = Path(tempfile.mkdtemp(prefix="runledger-postgres-"))
    if os.geteuid() == 0:
        shutil.chown(root, SERVER_USER)
    data, port = root / "data", _free_port()
    user = SERVER_USER if os.geteuid() == 0 else os.environ.get("USER", "postgres")
    subprocess.run(
        _as_server_user([str(bin_dir / "initdb"), "-D", str(data), "-A", "trust", "-U", user, "--no-sync"]),
        check=True,
        capture_output=True,
    )
    options = f"-h 127.0.0.1 -p {port} -k {root} -c fsync=off -c full_page_writes=off"
    pg_ctl = [str(bin_dir / "pg_ctl"), "-D", str(data), "-l", str(root / "server.log"), "-w"]
    subprocess.run(_as_server_user([*pg_ctl, "-o", options, "start"]), check=True, capture_output=True)
    try:
        server = PostgresServer(host="127.0.0.1", port=port, user=user, dbname=DATABASE)
        new_database(server, DATABASE)
        yield server
    finally:
        subprocess.run(_as_server_user([*pg_ctl, "-m", "immediate", "stop"]), check=False, capture_output=True)
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """A cluster started for the session, stopped after."""
    if not installed():
        pytest.fail("PostgreSQL is not installed: `make test` installs Debian's postgresql package (as root)")
    with local_cluster() as server:
        yield server
