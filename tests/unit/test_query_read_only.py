"""`runledger query` is read-only by construction: whatever the SQL, the reader's connection
changes no byte of the warehouse, writes no file, loads no extension and opens no connection.

The attacker's statements run straight on `connect_read_only` (the statement filter of the CLI
is bypassed on purpose), bare and inside every wrapper DuckDB has, then through the CLI.
"""

from __future__ import annotations

import hashlib
import http.server
import threading
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from pipelines.cli import main
from pipelines.warehouse.connection import connect, connect_read_only

# One statement of every kind DuckDB parses, aimed at what an attacker would want: the warehouse
# file itself, another file, the network, extensions, secrets and the settings that guard them.
ATTACKS = [
    "insert into loads (source_name) values ('x')",
    "update loads set raw_rows = 0",
    "delete from loads",
    (
        "merge into loads using (select 'x' as source_name) s on false "
        "when not matched then insert (source_name) values ('x')"
    ),
    "create table evil as select 1",
    "create or replace view run_costs as select 1 as training_run",
    "create macro evil() as 1",
    "create sequence evil",
    "create schema evil",
    "create type evil as enum ('a')",
    "create persistent secret evil (type http, bearer_token 'x')",
    "drop table loads",
    "alter table loads add column evil integer",
    "comment on table loads is 'evil'",
    "truncate loads",
    "copy (select 1) to '{target}'",
    "copy (select 1) to '{warehouse}'",
    "copy loads from '{target}'",
    "copy from database main to evil",
    "export database '{folder}'",
    "import database '{folder}'",
    "attach '{target}' as evil",
    "attach '{warehouse}' as evil",
    "attach ':memory:' as evil",
    "detach main",
    "use evil",
    "install httpfs",
    "force install httpfs",
    "load httpfs",
    "load '{target}'",
    "update extensions",
    "set enable_external_access = true",
    "reset enable_external_access",
    "set lock_configuration = false",
    "set profiling_output = '{target}'",
    "set variable evil = 1",
    "pragma enable_profiling = 'json'",
    "pragma import_database('{folder}')",
    "call checkpoint()",
    "checkpoint",
    "force checkpoint",
    "vacuum loads",
    "analyze",
    "begin transaction",
    "select * from read_csv('{url}')",
    "select * from read_csv('{target}')",
    "select * from read_text('/etc/hostname')",
    "select * from read_blob('{warehouse}')",
    "select * from read_parquet('{url}')",
    "select * from read_json('{url}')",
    "select * from glob('/etc/*')",
    "select * from sniff_csv('{target}')",
    "select * from parquet_metadata('{target}')",
    "select * from duckdb_secrets()",
    "select getenv('HOME')",
    "select * from query('copy (select 1) to ''{target}''')",
    "with x as (select 1) select * from read_csv('{url}')",
]
WRAPPERS = ["{}", "explain {}", "explain analyze {}"]
# What the engine lets through, run bare or under EXPLAIN ANALYZE, and why it is harmless: the
# same file attached again is read-only too, a checkpoint or vacuum of a read-only file does
# nothing, a variable or transaction lives and dies with the connection, no secret exists to
# list, and reading the warehouse's own bytes reads what the user could read anyway.
HARMLESS = {
    "attach '{warehouse}' as evil",
    "set variable evil = 1",
    "call checkpoint()",
    "checkpoint",
    "force checkpoint",
    "vacuum loads",
    "analyze",
    "begin transaction",
    "select * from duckdb_secrets()",
    "select * from read_blob('{warehouse}')",
}


class _CountingHandler(http.server.BaseHTTPRequestHandler):
    hits = 0

    def do_GET(self) -> None:
        type(self).hits += 1
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b"a\n1\n")

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def http_url() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _CountingHandler)
    _CountingHandler.hits = 0
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/data.csv"
    server.shutdown()
    server.server_close()


@pytest.fixture
def warehouse(tmp_path: Path) -> Path:
    path = tmp_path / "lake" / "warehouse.duckdb"
    conn = connect(path)
    conn.execute(
        "insert into loads (load_id, source_name, source_format, billing_period, raw_rows, status, started_at) "
        "values ('l1', 'aws-main', 'cur2', date '2026-11-01', 12069, 'loaded', now())"
    )
    conn.close()
    return path


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _files(root: Path) -> set[Path]:
    return {p for p in root.rglob("*") if p.is_file()}


def _attacks(tmp_path: Path, warehouse: Path, url: str) -> dict[str, tuple[str, str]]:
    """Each statement to try, with the attack and wrapper it was made of."""
    values = {"target": tmp_path / "written.csv", "folder": tmp_path / "exported", "warehouse": warehouse, "url": url}
    return {wrapper.format(attack.format(**values)): (attack, wrapper) for attack in ATTACKS for wrapper in WRAPPERS}


def test_the_readers_connection_refuses_every_write_whatever_the_statement(
    tmp_path: Path, warehouse: Path, http_url: str
) -> None:
    before, files = _digest(warehouse), _files(tmp_path)
    executed = []
    for statement, made_of in _attacks(tmp_path, warehouse, http_url).items():
        conn = connect_read_only(warehouse)
        try:
            conn.execute(statement).fetchall()
            executed.append(made_of)
        except duckdb.Error:
            pass
        try:
            assert conn.execute("select current_setting('enable_external_access')").fetchone() == (False,)
            assert conn.execute("select count(*), sum(raw_rows) from loads").fetchone() == (1, 12069)
        except duckdb.TransactionException:
            conn.execute("rollback")
        finally:
            conn.close()
    assert _digest(warehouse) == before
    assert _files(tmp_path) == files
    assert _CountingHandler.hits == 0
    # What the engine let through is harmless: a checkpoint of a read-only file, a variable,
    # a transaction of its own, a dry plan.
    assert {attack for attack, wrapper in executed if wrapper != "explain {}"} <= HARMLESS


def test_runledger_query_refuses_each_attack_with_exit_2_and_changes_nothing(
    tmp_path: Path, warehouse: Path, http_url: str
) -> None:
    config = tmp_path / "runledger.yaml"
    config.write_text(f"warehouse: {warehouse}\n")
    before, files = _digest(warehouse), _files(tmp_path)
    refused = 0
    for statement, (attack, wrapper) in _attacks(tmp_path, warehouse, http_url).items():
        result = CliRunner().invoke(main, ["query", "--config", str(config), statement])
        if wrapper == "explain {}" or attack in HARMLESS:
            assert result.exit_code in (0, 2), (statement, result.output)
        else:
            assert (result.exit_code, result.output[:7]) == (2, "error: "), (statement, result.output)
            refused += 1
    assert refused == 2 * (len(ATTACKS) - len(HARMLESS))
    for statement in ["select 1; select 2", "select 1; drop table loads", ""]:
        assert CliRunner().invoke(main, ["query", "--config", str(config), statement]).exit_code == 2
    assert _digest(warehouse) == before
    assert _files(tmp_path) == files
    assert _CountingHandler.hits == 0


def test_runledger_query_names_why_it_refuses(tmp_path: Path, warehouse: Path) -> None:
    config = tmp_path / "runledger.yaml"
    config.write_text(f"warehouse: {warehouse}\n")

    def run(sql: str) -> str:
        result = CliRunner().invoke(main, ["query", "--config", str(config), sql])
        assert result.exit_code == 2
        return result.output.strip()

    assert run("select 1; select 2") == (
        "error: runledger query runs exactly one statement; got 2 (run them one at a time)"
    )
    assert (
        run("drop table loads") == "error: runledger query runs one read-only SELECT (or EXPLAIN) statement; got DROP"
    )
    assert "file system operations are disabled" in run("explain analyze copy (select 1) to 'x.csv'")
    assert run("selec 1").startswith("error: query failed: Parser Error: syntax error")
    result = CliRunner().invoke(
        main, ["query", "--config", str(config), "--format", "csv", "select sum(raw_rows) as r from loads"]
    )
    assert (result.exit_code, result.output.splitlines()) == (0, ["r", "12069"])
