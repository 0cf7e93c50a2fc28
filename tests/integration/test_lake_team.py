"""The team setup: the lake's catalog in PostgreSQL and its data files in S3 (a real PostgreSQL 15
cluster and a moto server on 127.0.0.1). Credentials come from libpq's and AWS's environment."""

from __future__ import annotations

import subprocess
import sys
import uuid
from pathlib import Path

import boto3
import pytest
import yaml
from click.testing import CliRunner

from pipelines.cli import main
from pipelines.config import load_config
from tests.support.confined_attacks import run_confined
from tests.support.demo_lake import SharedDemo, copy_demo_inputs
from tests.support.lake import reading
from tests.support.postgres import PostgresServer, new_database, psql

RUNLEDGER = str(Path(sys.executable).with_name("runledger"))
READER_ROLE = "lake_reader"


@pytest.fixture
def team_project(
    shared_demo: SharedDemo,
    tmp_path: Path,
    postgres_server: PostgresServer,
    moto_endpoint: str,
    monkeypatch: pytest.MonkeyPatch,
    aws_credentials: None,
) -> tuple[Path, str, str]:
    """The demo with its lake in a fresh PostgreSQL database and a fresh bucket (with dummy AWS
    credentials): (config, database, bucket)."""
    monkeypatch.setenv("PGUSER", postgres_server.user)
    database = new_database(postgres_server, f"lake_{uuid.uuid4().hex[:10]}")
    bucket = f"lake-{uuid.uuid4().hex[:10]}"
    boto3.client("s3", endpoint_url=moto_endpoint).create_bucket(Bucket=bucket)
    config = copy_demo_inputs(shared_demo, tmp_path)
    document = yaml.safe_load(config.read_text())
    document["warehouse"] = {
        "catalog": {"postgres": {"host": postgres_server.host, "port": postgres_server.port, "dbname": database}},
        "data_path": f"s3://{bucket}/runledger/",
        "endpoint_url": moto_endpoint,
    }
    config.write_text(yaml.safe_dump(document))
    return config, database, bucket


def _objects(moto_endpoint: str, bucket: str) -> list[str]:
    listing = boto3.client("s3", endpoint_url=moto_endpoint).list_objects_v2(Bucket=bucket)
    return [item["Key"] for item in listing.get("Contents", [])]


def test_the_nightly_job_writes_a_postgres_and_s3_lake(
    team_project: tuple[Path, str, str], postgres_server: PostgresServer, moto_endpoint: str
) -> None:
    config, database, bucket = team_project
    result = CliRunner().invoke(main, ["run", "--config", str(config)])
    assert result.exit_code == 0, result.output
    assert "reconciliation: 4 source periods, all differences 0" in result.output
    assert "llm-7b-pt-r1" in result.output and "19.50  over" in result.output
    assert any(key.startswith("runledger/main/focus_line_items/") for key in _objects(moto_endpoint, bucket))
    assert psql(postgres_server, database, "select count(*) from ducklake_snapshot").strip() != "0"
    with reading(config) as conn:
        assert conn.execute("select sum(focus_rows) from reconciliation").fetchone() == (12413,)
    answer = CliRunner().invoke(
        main, ["query", "--config", str(config), "--format", "csv", "select count(*) as n from loads"]
    )
    assert answer.exit_code == 0, answer.output
    assert int(answer.output.splitlines()[1]) >= 4


# Opens the lake as a writer once the go file exists, so that every process opens a new lake at
# the same moment; prints the schema versions it finds recorded.
FIRST_WRITER = """
import os, sys, time
from pathlib import Path
from pipelines.config import load_config
from pipelines.warehouse.connection import connect
lake = load_config(Path(sys.argv[1])).lake
print("ready", flush=True)
while not os.path.exists(sys.argv[2]):
    time.sleep(0.01)
print(connect(lake).execute("select count(*) from schema_version").fetchone()[0])
"""


def test_writers_opening_a_new_lake_at_once_create_it_once(team_project: tuple[Path, str, str], tmp_path: Path):
    config, _, _ = team_project
    go = tmp_path / "go"
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", FIRST_WRITER, str(config), str(go)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(4)
    ]
    assert [writer.stdout.readline() for writer in writers] == ["ready\n"] * 4
    go.touch()
    outputs = [writer.communicate(timeout=120) for writer in writers]
    assert [writer.returncode for writer in writers] == [0] * 4, [errors[-1500:] for _, errors in outputs]
    assert [out.strip() for out, _ in outputs] == ["1"] * 4


def test_two_processes_write_two_billing_periods_at_once(team_project: tuple[Path, str, str]) -> None:
    config, _, _ = team_project
    first = CliRunner().invoke(main, ["run", "--config", str(config), "--period", "2026-10"])
    assert first.exit_code == 0, first.output
    runs = [
        subprocess.Popen(
            [RUNLEDGER, "run", "--config", str(config), "--period", period],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for period in ("2026-10", "2026-11")
    ]
    outputs = [run.communicate(timeout=600) for run in runs]
    assert [run.returncode for run in runs] == [0, 0], [errors[-1500:] for _, errors in outputs]
    assert not any("waiting for the writer" in errors for _, errors in outputs)  # PostgreSQL takes both at once
    with reading(config) as conn:
        assert conn.execute(
            "select count(*), sum(abs(billed_raw_focus_diff) + abs(billed_focus_allocated_diff)) from reconciliation"
        ).fetchone() == (4, 0)


def test_a_reader_with_a_read_only_role_cannot_write_whatever_the_sql(
    team_project: tuple[Path, str, str],
    postgres_server: PostgresServer,
    moto_endpoint: str,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    # Readers of the team setup reach the catalog's port and the object store's: what keeps them
    # from writing is a read-only role for the catalog and read-only credentials for the bucket, as
    # docs/operations.md says (moto grants every request, so only the catalog's side is shown).
    config, database, bucket = team_project
    assert CliRunner().invoke(main, ["run", "--config", str(config), "--period", "2026-11"]).exit_code == 0
    psql(
        postgres_server,
        database,
        f"create role {READER_ROLE} login; grant usage on schema public to {READER_ROLE}; "
        f"grant select on all tables in schema public to {READER_ROLE}",
    )
    snapshots = "select count(*), max(snapshot_id) from ducklake_snapshot"
    before, objects = psql(postgres_server, database, snapshots), _objects(moto_endpoint, bucket)
    monkeypatch.setenv("PGUSER", READER_ROLE)
    ok = CliRunner().invoke(main, ["query", "--config", str(config), "select count(*) from focus_line_items"])
    assert ok.exit_code == 0, ok.output
    lake = load_config(config).lake
    catalog = lake.catalog.removeprefix("postgres:")
    attacks = [
        f"attach 'ducklake:postgres:{catalog}' as w (data_path '{lake.data_path}')",
        (
            "insert into w.loads (load_id, source_name, source_format, billing_period, status, started_at) "
            "values ('x', 'x', 'x', date '2026-11-01', 'x', now())"
        ),
        "delete from w.focus_line_items",
        f"attach '{catalog}' as pg (type postgres)",
        "call postgres_execute('pg', 'delete from ducklake_snapshot')",
        "delete from focus_line_items",
    ]
    spill = tmp_path_factory.mktemp("spill")
    ran = run_confined(lake, spill, attacks)
    assert set(ran) <= {attacks[0], attacks[3]}, ran  # it may attach, as it may read
    monkeypatch.setenv("PGUSER", postgres_server.user)
    assert psql(postgres_server, database, snapshots) == before
    assert _objects(moto_endpoint, bucket) == objects
