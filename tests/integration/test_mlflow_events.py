"""Run events from MLflow: a real MLflow tracking store (SQLite under tmp_path) written with the
MlflowClient, read back through `kind: run_events` with `mlflow:`, and priced by the waste step."""

from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

import pytest
from mlflow.tracking import MlflowClient

from connectors.training.event_files import RunEventsError
from connectors.training.mlflow_runs import mlflow_run_events
from pipelines.attribution.allocate import allocate_period
from pipelines.attribution.settings import DEFAULT_DIMENSIONS
from pipelines.config import load_config
from pipelines.progress.events import read_source_events, replace_run_events
from pipelines.sources.run_events.settings import RunEventsSource
from pipelines.warehouse.connection import transaction
from pipelines.warehouse.summaries import build_summaries
from pipelines.waste.settings import Waste
from pipelines.waste.tables import build_waste
from tests.support import write_config
from tests.support.lake import memory_warehouse
from tests.unit.test_waste import PERIOD, add_line, hours

EXPERIMENT = "pretrain-1b"


def millis(moment: datetime) -> int:
    return int(moment.replace(tzinfo=UTC).timestamp() * 1000)


@pytest.fixture(scope="module")
def tracking_uri(tmp_path_factory: pytest.TempPathFactory) -> str:
    """llm-m as two MLflow runs: the first fails at 03:30 after a checkpoint at 02:00 on 16 GPUs;
    the second (a restart on 8 GPUs at 04:00) checkpoints at 06:00 and finishes at 10:00. A run
    in another experiment is not read."""
    uri = f"sqlite:///{tmp_path_factory.mktemp('mlflow') / 'mlflow.db'}"
    client = MlflowClient(tracking_uri=uri)
    experiment = client.create_experiment(EXPERIMENT)
    first = client.create_run(
        experiment,
        start_time=millis(hours(5, 0)),
        run_name="llm-m-attempt-1",
        tags={"training_run": "llm-m", "gpus": "16", "config_hash": "cfg-7"},
    ).info.run_id
    client.log_metric(first, "checkpoint", 1, timestamp=millis(hours(5, 2)), step=200)
    client.log_metric(first, "loss", 2.5, timestamp=millis(hours(5, 3)), step=300)
    client.set_terminated(first, "FAILED", end_time=millis(datetime(2026, 10, 5, 3, 30)))
    second = client.create_run(
        experiment,
        start_time=millis(hours(5, 4)),
        run_name="llm-m-attempt-2",
        tags={"training_run": "llm-m", "gpus": "8", "config_hash": "cfg-7"},
    ).info.run_id
    client.log_metric(second, "checkpoint", 1, timestamp=millis(hours(5, 6)), step=400)
    client.set_terminated(second, "FINISHED", end_time=millis(hours(5, 10)))
    other = client.create_experiment("other")
    client.create_run(other, start_time=millis(hours(5, 0)), tags={"training_run": "llm-x"})
    return uri


def test_mlflow_runs_become_run_events(tracking_uri: str) -> None:
    events = mlflow_run_events(tracking_uri, [EXPERIMENT], "training_run")
    assert sorted((e.training_run, e.time, e.event, e.step, e.gpus, e.config_hash) for e in events) == [
        ("llm-m", hours(5, 0), "start", 0, 16, "cfg-7"),
        ("llm-m", hours(5, 2), "checkpoint", 200, None, "cfg-7"),
        ("llm-m", datetime(2026, 10, 5, 3, 30), "failure", 200, None, "cfg-7"),
        ("llm-m", hours(5, 4), "resume", 0, 8, "cfg-7"),
        ("llm-m", hours(5, 6), "checkpoint", 400, None, "cfg-7"),
        ("llm-m", hours(5, 10), "end", 400, None, "cfg-7"),
    ]
    assert all(e.origin.startswith(f"mlflow {tracking_uri} run ") for e in events)


def test_an_unknown_experiment_is_named(tracking_uri: str) -> None:
    with pytest.raises(RunEventsError, match="experiment_names: no experiment 'missing'"):
        mlflow_run_events(tracking_uri, [EXPERIMENT, "missing"], "training_run")


def test_mlflow_events_price_the_recompute(tracking_uri: str, tmp_path: Path) -> None:
    """The configured source feeds run_events; the failure loses 02:00 → 03:30 on 16 GPUs."""
    config = load_config(
        write_config(
            tmp_path,
            f"""\
sources:
  - name: mlflow
    kind: run_events
    mlflow: {{tracking_uri: "{tracking_uri}", experiment_names: [{EXPERIMENT}]}}
""",
        )
    )
    (source,) = config.run_events_sources
    assert isinstance(source, RunEventsSource)
    conn = memory_warehouse()
    add_line(conn, "m-gpu", "llm-m", "compute", "i-m", hours(5, 0), hours(5, 12), "300", gpu_hours="120")
    allocate_period(conn, PERIOD, DEFAULT_DIMENSIONS)
    build_summaries(conn)
    replace_run_events(conn, {source.name: read_source_events(config, source)})
    with transaction(conn):
        build_waste(conn, Waste())
    rows = dict(
        conn.execute(
            "select kind, sum(effective_cost) from waste where training_run = 'llm-m' group by kind"
        ).fetchall()
    )
    conn.close()
    # 24 GPU-hours at 300 / 120; idle: 2 of i-m's 12 hours after the 10:00 end
    assert rows == {"recompute_after_failure": Decimal(24) * 300 / 120, "idle_after_run": Decimal(300) * 2 / 12}
