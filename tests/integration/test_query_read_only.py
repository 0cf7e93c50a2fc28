"""`runledger query` is read-only by construction: whatever the SQL, it changes no byte of the lake
(catalog or data files), writes no other file, loads no extension and opens no connection.

The attacks run as `runledger query`'s child runs SQL (the kernel's sandbox, then the locked
reader) but with the CLI's statement filter bypassed, bare and inside every wrapper DuckDB has;
then a few through the CLI itself.
"""

from __future__ import annotations

import hashlib
import http.server
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from pipelines.cli import main
from pipelines.warehouse.lake import Lake
from tests.support.confined_attacks import run_confined
from tests.support.lake import writing

# One statement of every kind DuckDB parses, aimed at what an attacker would want: the lake's
# catalog and data files, another file, the network, extensions, secrets and the settings that
# guard them. The lake's catalog extension (sqlite) is loaded in a reader: it attaches files on its
# own, past DuckDB's external-access setting — the kernel's sandbox is what stops those.
ATTACKS = [
    (
        "insert into loads (load_id, source_name, source_format, billing_period, status, started_at) "
        "values ('x', 'x', 'x', date '2026-11-01', 'x', now())"
    ),
    "update loads set raw_rows = 0",
    "delete from loads",
    "merge into loads using (select 'x' as load_id) s on false when not matched then insert (load_id) values ('x')",
    "create table evil as select 1",
    "create or replace view run_costs as select 1 as training_run",
    "create macro evil() as 1",
    "create persistent secret evil (type http, bearer_token 'x')",
    "drop table loads",
    "alter table loads add column evil integer",
    "comment on table loads is 'evil'",
    "truncate loads",
    "copy (select 1) to '{target}'",
    "copy (select 1) to '{catalog}'",
    "copy (select 1) to '{data}evil.parquet' (format parquet, use_tmp_file false)",
    "copy (select 1) to '{data_file}' (format parquet, use_tmp_file false)",
    "copy loads from '{target}'",
    "export database '{folder}'",
    "attach 'ducklake:sqlite:{catalog}' as evil (data_path '{data}')",
    "attach '{catalog}' as evil (type sqlite)",
    "attach 'ducklake:sqlite:{target}.sqlite' as evil (data_path '{folder}/')",
    "attach '{target}' as evil",
    "detach lake",
    "install httpfs",
    "load httpfs",
    "load '{target}'",
    "set enable_external_access = true",
    "set lock_configuration = false",
    "set profiling_output = '{target}'",
    "pragma enable_profiling = 'json'",
    "call ducklake_expire_snapshots('lake', older_than => now())",
    "call ducklake_cleanup_old_files('lake', cleanup_all => true)",
    "call ducklake_merge_adjacent_files('lake')",
    "checkpoint",
    "vacuum loads",
    "select * from read_csv('{url}')",
    "select * from read_text('/etc/hostname')",
    "select * from read_parquet('{url}')",
    "select * from glob('/etc/*')",
    "select * from sqlite_scan('{catalog}', 'ducklake_snapshot')",
    "select getenv('HOME')",
]
WRAPPERS = ["{}", "explain analyze {}"]
# What a confined reader may still run, and why it is harmless: it reads the catalog it reads
# anyway, and what would write (a checkpoint, a vacuum, DuckLake's upkeep on the read-only lake or
# on a second, writable attachment) finds nothing it may change: the digests of every file prove it.
HARMLESS = {
    "attach 'ducklake:sqlite:{catalog}' as evil (data_path '{data}')",
    "attach '{catalog}' as evil (type sqlite)",
    "select * from sqlite_scan('{catalog}', 'ducklake_snapshot')",
    "checkpoint",
    "vacuum loads",
    "call ducklake_merge_adjacent_files('lake')",
    "call ducklake_cleanup_old_files('lake', cleanup_all => true)",
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
def project(tmp_path: Path) -> Path:
    """A lake holding one load and a line item (so it has a data file), with its runledger.yaml."""
    (tmp_path / "runledger.yaml").write_text("warehouse: lake\n")
    with writing(tmp_path) as conn:
        conn.execute(
            "insert into loads (load_id, source_name, source_format, billing_period, raw_rows, status, started_at) "
            "values ('l1', 'aws-main', 'cur2', date '2026-11-01', 12069, 'loaded', now())"
        )
        conn.execute(
            "insert into focus_line_items (x_LineItemKey, x_SourceName, x_SourceFormat, x_SourceFile, x_IngestedAt, "
            "x_CostCategory, x_GpuHours, BillingPeriodStart, BilledCost) values ('k1', 'aws-main', 'aws_cur2', 'f', "
            "now(), 'compute', 0, timestamp '2026-11-01', 12.5)"
        )
        # a restated line: the first data file stays for time travel, one an upkeep could delete
        conn.execute("update focus_line_items set BilledCost = 13.5")
    return tmp_path


def _digests(root: Path) -> dict[str, str]:
    """Every file's bytes, but the SQLite catalog by its content (its write-ahead log and index
    files come and go as connections open and close)."""
    digests = {}
    for path in sorted(root.rglob("*")):
        if not path.is_file() or "spill" in path.parts or path.name.endswith(("-wal", "-shm")):
            continue
        if path.suffix == ".sqlite":
            catalog = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)
            content = "\n".join(catalog.iterdump()).encode()
            catalog.close()
        else:
            content = path.read_bytes()
        digests[str(path.relative_to(root))] = hashlib.sha256(content).hexdigest()
    return digests


def _attacks(project: Path, url: str) -> dict[str, tuple[str, str]]:
    lake = project / "lake"
    values = {
        "target": project / "written.csv",
        "folder": project / "exported",
        "catalog": lake / "catalog.sqlite",
        "data": f"{lake / 'data'}/",
        "data_file": next((lake / "data").rglob("*.parquet")),
        "url": url,
    }
    return {wrapper.format(attack.format(**values)): (attack, wrapper) for attack in ATTACKS for wrapper in WRAPPERS}


def test_a_confined_reader_changes_nothing_whatever_the_statement(project: Path, http_url: str, tmp_path_factory):
    before = _digests(project)
    attacks = _attacks(project, http_url)
    lake = Lake.in_folder(project / "lake")
    spill = tmp_path_factory.mktemp("spill")
    ran = {attacks[statement] for statement in run_confined(lake, spill, list(attacks))}
    assert _digests(project) == before
    assert _CountingHandler.hits == 0
    assert {attack for attack, _ in ran} <= HARMLESS, ran


def test_runledger_query_refuses_the_attacks_with_exit_2_and_changes_nothing(project: Path, http_url: str) -> None:
    before = _digests(project)
    values = {"catalog": project / "lake" / "catalog.sqlite", "data": f"{project / 'lake' / 'data'}/"}
    statements = [
        f"explain analyze copy (select 1) to '{values['catalog']}'",
        f"select * from read_csv('{http_url}')",
        "select 1; drop table loads",
        "delete from focus_line_items",
        f"select * from (select 1) t, (select count(*) from sqlite_scan('{values['catalog']}', 'evil'))",
    ]
    for statement in statements:
        result = CliRunner().invoke(main, ["query", "--config", str(project / "runledger.yaml"), statement])
        assert (result.exit_code, result.output[:7]) == (2, "error: "), (statement, result.output)
    assert _digests(project) == before
    assert _CountingHandler.hits == 0


def test_runledger_query_answers_and_names_why_it_refuses(project: Path) -> None:
    config = str(project / "runledger.yaml")

    def run(sql: str) -> str:
        result = CliRunner().invoke(main, ["query", "--config", config, sql])
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
        main, ["query", "--config", config, "--format", "csv", "select sum(raw_rows) as r from loads"]
    )
    assert (result.exit_code, result.output.splitlines()) == (0, ["r", "12069"])
