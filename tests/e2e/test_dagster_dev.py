"""`make dev` (`dg dev`) serves the code location: the UI's GraphQL endpoint lists the assets with
their column documentation, the checks, the nightly schedule and the delivery sensor, and the
instance uses the repo's dagster.yaml; nothing superseded is run, nothing warns, and SIGTERM stops it."""

import json
import os
import re
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support import REPO
from tests.support.demo_lake import SharedDemo, copy_demo_inputs

STARTUP_SECONDS = 180
QUERY = """
{
  assetNodes {
    assetKey { path }
    groupName
    assetChecksOrError { ... on AssetChecks { checks { name blocking } } }
    metadataEntries { label ... on TableSchemaMetadataEntry { schema { columns { name type description } } } }
  }
  workspaceOrError { ... on Workspace { locationEntries { name } } }
  repositoriesOrError {
    ... on RepositoryConnection {
      nodes { name schedules { name cronSchedule executionTimezone } sensors { name minIntervalSeconds } }
    }
  }
  instance { poolConfig { defaultPoolLimit } runQueueConfig { tagConcurrencyLimitsYaml } }
}
"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def graphql(port: int, query: str) -> dict:
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/graphql",
        data=json.dumps({"query": query}).encode(),
        headers={"Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return json.loads(response.read())
    except urllib.error.HTTPError as error:
        raise AssertionError(f"GraphQL error {error.code}: {error.read().decode()[:2000]}") from None


def wait_until_served(port: int, process: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"make dev exited with {process.returncode}:\n{log.read_text()[-3000:]}")
        try:
            nodes = graphql(port, "{ assetNodes { id } }")["data"]["assetNodes"]
            if nodes:
                return
        except (urllib.error.URLError, ConnectionError, TimeoutError, KeyError, TypeError, AssertionError):
            pass
        time.sleep(1)
    pytest.fail(f"make dev did not serve the code location within {STARTUP_SECONDS} s:\n{log.read_text()[-3000:]}")


@dataclass(frozen=True)
class DagsterDev:
    port: int
    log: Path
    process: subprocess.Popen


@pytest.fixture
def dagster_dev(shared_demo: SharedDemo, tmp_path: Path) -> Iterator[DagsterDev]:
    config = copy_demo_inputs(shared_demo, tmp_path / "project")
    port = free_port()
    log = tmp_path / "dagster-dev.log"
    (tmp_path / "tmp").mkdir()
    env = os.environ | {"TMPDIR": str(tmp_path / "tmp")}
    make = (
        f"make --no-print-directory dev DAGSTER_PORT={port} DAGSTER_HOME_DIR={tmp_path / 'dagster_home'} "
        f"RUNLEDGER_CONFIG={config}"
    )
    with log.open("w") as output:
        # as a service starts it (`make dev &`, nohup, a supervisor): SIGINT ignored
        process = subprocess.Popen(
            ["sh", "-c", f"trap '' INT; exec {make}"],
            cwd=REPO,
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        wait_until_served(port, process, log)
        yield DagsterDev(port, log, process)
    finally:
        if group_alive(process.pid):
            stop(process)


def group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


def stop(process: subprocess.Popen) -> float:
    """SIGTERM to `make` alone, as a supervisor stops it; the seconds until every process of the
    group (dg, the webserver, the daemon, the code servers) is gone, SIGKILL after 60 s."""
    started = time.monotonic()
    process.terminate()
    while group_alive(process.pid) and time.monotonic() < started + 60:
        process.poll()
        time.sleep(0.2)
    stopped = time.monotonic() - started
    if group_alive(process.pid):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait(timeout=30)
    return stopped


def test_make_dev_shows_assets_checks_schedule_and_sensor(dagster_dev: DagsterDev) -> None:
    data = graphql(dagster_dev.port, QUERY)["data"]
    assets = {"/".join(node["assetKey"]["path"]): node for node in data["assetNodes"]}
    assert {
        "raw/aws_main",
        "raw/gcp_main",
        "focus_line_items",
        "cost_allocations",
        "reconciliation",
        "budget_variance",
        "post_mortem_reports",
    } <= set(assets)
    assert assets["raw/aws_main"]["groupName"] == "ingest"
    checks = {
        (key, check["name"], check["blocking"])
        for key, node in assets.items()
        for check in node["assetChecksOrError"].get("checks", [])
    }
    assert {
        ("reconciliation", "zero_differences", True),
        ("cost_allocations", "conservation", True),
        ("raw/aws_main", "schema_drift", False),
        ("raw/gcp_main", "freshness", False),
        ("unattributed_costs", "untagged_share", False),
    } <= checks
    (repository,) = data["repositoriesOrError"]["nodes"]
    assert repository["schedules"] == [
        {"name": "nightly_refresh", "cronSchedule": "0 6 * * *", "executionTimezone": "UTC"},
        {"name": "weekly_lake_maintenance", "cronSchedule": "0 5 * * 0", "executionTimezone": "UTC"},
    ]
    assert repository["sensors"] == [{"name": "new_billing_deliveries", "minIntervalSeconds": 300}]
    assert data["instance"]["poolConfig"]["defaultPoolLimit"] == 2
    assert "runledger/warehouse" in data["instance"]["runQueueConfig"]["tagConcurrencyLimitsYaml"]
    # the location keeps its name, so schedule and sensor states kept in .dagster/ still apply
    assert data["workspaceOrError"]["locationEntries"] == [{"name": "pipelines.definitions"}]

    schemas = {
        key: {column["name"]: column for column in entry["schema"]["columns"]}
        for key, node in assets.items()
        for entry in node["metadataEntries"]
        if entry["label"] == "dagster/column_schema"
    }
    # the two assets that build files, not tables
    assert set(assets) - set(schemas) == {"post_mortem_reports", "lake_maintenance"}
    ratio = schemas["cost_allocations"]["allocation_ratio"]
    assert ratio["type"] == "DECIMAL(38,10)" and "sum to exactly 1" in ratio["description"]
    assert "BilledCost" in schemas["raw/aws_main"] and "share_of_period" in schemas["unattributed_costs"]

    # SIGTERM stops it all, though it started with SIGINT ignored (Dagster gives SIGTERM SIGINT's handler)
    assert stop(dagster_dev.process) < 30
    output = dagster_dev.log.read_text()
    assert "dg dev" in output and "Serving dagster-webserver" in output and "Dagster services shut down." in output
    # no Python warning (`SupersessionWarning: Function dev_command is superseded …` before), no
    # Dagster warning (a dagster.yaml in the folder dg dev starts in, ignored beside DAGSTER_HOME)
    assert not re.search(r"\w+Warning: |WARNING", output), output[-3000:]
