"""A real BigQuery emulator (bqemulator, in its own venv `.venv-bqemulator`) on 127.0.0.1, and
helpers to create billing export tables in it with the real export schema."""

from __future__ import annotations

import io
import json
import os
import platform
import shutil
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from google.auth.credentials import AnonymousCredentials
from google.cloud import bigquery

from tests.support import REPO

EMULATOR_VENV = REPO / ".venv-bqemulator"
PROJECT = "test-project"
STARTUP_SECONDS = 60

KEY_VALUE = [bigquery.SchemaField("key", "STRING"), bigquery.SchemaField("value", "STRING")]


def _record(name: str, fields: list[bigquery.SchemaField], mode: str = "NULLABLE") -> bigquery.SchemaField:
    return bigquery.SchemaField(name, "RECORD", mode=mode, fields=fields)


def _strings(*names: str) -> list[bigquery.SchemaField]:
    return [bigquery.SchemaField(name, "STRING") for name in names]


# The detailed usage cost export (gcp_billing_export_resource_v1_*), as Google documents it.
DETAILED_EXPORT_SCHEMA = [
    bigquery.SchemaField("billing_account_id", "STRING"),
    _record("service", _strings("id", "description")),
    _record("sku", _strings("id", "description")),
    bigquery.SchemaField("usage_start_time", "TIMESTAMP"),
    bigquery.SchemaField("usage_end_time", "TIMESTAMP"),
    _record(
        "project",
        _strings("id", "number", "name")
        + [_record("labels", KEY_VALUE, "REPEATED"), bigquery.SchemaField("ancestry_numbers", "STRING")],
    ),
    _record("labels", KEY_VALUE, "REPEATED"),
    _record("system_labels", KEY_VALUE, "REPEATED"),
    _record("location", _strings("location", "country", "region", "zone")),
    _record("resource", _strings("name", "global_name")),
    bigquery.SchemaField("export_time", "TIMESTAMP"),
    bigquery.SchemaField("cost", "FLOAT"),
    bigquery.SchemaField("currency", "STRING"),
    bigquery.SchemaField("currency_conversion_rate", "FLOAT"),
    _record(
        "usage",
        [
            bigquery.SchemaField("amount", "FLOAT"),
            bigquery.SchemaField("unit", "STRING"),
            bigquery.SchemaField("amount_in_pricing_units", "FLOAT"),
            bigquery.SchemaField("pricing_unit", "STRING"),
        ],
    ),
    _record(
        "credits",
        _strings("name") + [bigquery.SchemaField("amount", "FLOAT")] + _strings("full_name", "id", "type"),
        "REPEATED",
    ),
    _record("invoice", _strings("month")),
    bigquery.SchemaField("cost_type", "STRING"),
    _record("adjustment_info", _strings("id", "description", "mode", "type")),
    bigquery.SchemaField("cost_at_list", "FLOAT"),
    bigquery.SchemaField("transaction_type", "STRING"),
    bigquery.SchemaField("seller_name", "STRING"),
]

# An older standard export table: no resource, adjustment_info, cost_at_list, seller_name,
# transaction_type, and credits without type/id/full_name.
OLD_STANDARD_EXPORT_SCHEMA = [
    field
    if field.name != "credits"
    else _record("credits", _strings("name") + [bigquery.SchemaField("amount", "FLOAT")], "REPEATED")
    for field in DETAILED_EXPORT_SCHEMA
    if field.name not in ("resource", "adjustment_info", "cost_at_list", "seller_name", "transaction_type")
]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _duckdb_platform() -> str:
    machine = platform.machine().lower()
    return "linux_arm64" if machine in ("aarch64", "arm64") else "linux_amd64"


def _home_with_spatial_extension(home: Path) -> Path:
    """A HOME whose DuckDB extension folder holds the spatial extension from the emulator's venv,
    so the emulator never downloads it (and the user's ~/.duckdb is left alone)."""
    bundled = sorted(
        EMULATOR_VENV.glob("lib/python*/site-packages/duckdb_extension_spatial/extensions/v*/spatial.duckdb_extension")
    )
    if not bundled:
        pytest.fail(f"{EMULATOR_VENV}: duckdb-extension-spatial is missing; run `make {EMULATOR_VENV.name}/.installed`")
    target = home / ".duckdb" / "extensions" / bundled[0].parent.name / _duckdb_platform()
    target.mkdir(parents=True)
    shutil.copy(bundled[0], target / bundled[0].name)
    return home


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/healthz", timeout=1) as response:
            return response.status == 200
    except OSError:
        return False


@pytest.fixture(scope="session")
def bigquery_emulator(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The emulator's REST endpoint, e.g. `http://127.0.0.1:PORT`; stopped after the session."""
    executable = EMULATOR_VENV / "bin" / "bqemulator"
    if not executable.exists():
        pytest.fail(f"{executable} not found; run `make {EMULATOR_VENV.name}/.installed` (make test does)")
    folder = tmp_path_factory.mktemp("bqemulator")
    home = _home_with_spatial_extension(folder / "home")
    rest_port, grpc_port = _free_port(), _free_port()
    url = f"http://127.0.0.1:{rest_port}"
    log = (folder / "emulator.log").open("wb")
    process = subprocess.Popen(
        [
            str(executable),
            "start",
            "--rest-host",
            "127.0.0.1",
            "--rest-port",
            str(rest_port),
            "--grpc-host",
            "127.0.0.1",
            "--grpc-port",
            str(grpc_port),
            "--project",
            PROJECT,
        ],
        env={**os.environ, "HOME": str(home)},
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + STARTUP_SECONDS
        while not _healthy(url):
            if process.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"BigQuery emulator did not start: {(folder / 'emulator.log').read_text()[-2000:]}")
            time.sleep(0.2)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()


def client(url: str) -> bigquery.Client:
    """A test client of the emulator (anonymous, as emulators expect)."""
    return bigquery.Client(PROJECT, credentials=AnonymousCredentials(), client_options={"api_endpoint": url})


def create_export_table(url: str, table_id: str, schema: list[bigquery.SchemaField]) -> None:
    """An empty export table, partitioned by ingestion time per day like Google's."""
    bq = client(url)
    bq.create_dataset(table_id.rsplit(".", 1)[0], exists_ok=True)
    table = bigquery.Table(table_id, schema=schema)
    table.time_partitioning = bigquery.TimePartitioning(type_=bigquery.TimePartitioningType.DAY)
    bq.create_table(table)


def append_rows(url: str, table_id: str, schema: list[bigquery.SchemaField], rows: list[dict]) -> None:
    """Appends rows with a load job of newline-delimited JSON, as the export's appends do."""
    data = "\n".join(json.dumps(row) for row in rows).encode()
    config = bigquery.LoadJobConfig(
        source_format=bigquery.SourceFormat.NEWLINE_DELIMITED_JSON,
        schema=schema,
        write_disposition=bigquery.WriteDisposition.WRITE_APPEND,
    )
    client(url).load_table_from_file(io.BytesIO(data), table_id, size=None, job_config=config).result()
