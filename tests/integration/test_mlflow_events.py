"""Run events from MLflow: a real MLflow tracking store (SQLite under tmp_path) written with the
MlflowClient, read back through `kind: run_events` with `mlflow:`, and priced by the waste step;
its step timings as metrics events and its system metrics as GPU utilization samples."""

from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import pytest
from mlflow.tracking import MlflowClient

from connectors.training.event_files import RunEventsError
from connectors.training.mlflow_runs import GpuUtilizationSample, mlflow_gpu_utilization, mlflow_run_events
from pipelines.attribution.allocate import allocate_period
from pipelines.attribution.settings import DEFAULT_DIMENSIONS
from pipelines.config import load_config
from pipelines.progress.events import read_source_events, replace_run_events
from pipelines.sources.run_events.settings import RunEventsSource
from pipelines.warehouse.connection import transaction
from pipelines.warehouse.summaries import build_summaries
from pipelines.waste.tables import WasteSettings, build_waste
from tests.support import write_config
from tests.support.lake import memory_warehouse
from tests.unit.test_waste import PERIOD, add_line, hours

EXPERIMENT = "pretrain-1b"


def millis(moment: datetime) -> int:
    return int(moment.replace(tzinfo=UTC).timestamp() * 1000)


@pytest.fixture(scope="module")
def tracking_uri(tmp_path_factory: pytest.TempPathFactory) -> str:
    """llm-m as two MLflow runs: the first fails at 03:30 after a checkpoint at 02:00 on 16 GPUs;
    the second (a restart on 8 GPUs at 04:00) checkpoints at 06:00 and finishes at 10:00. The
    first logs GPU utilization (system metrics of GPUs 0 and 1), the second step timings at steps
    300 and 500 and, from a node named node-1, GPU 0's utilization. A run in another experiment
    is not read."""
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
    for gpu, step, minute, percent in ((0, 0, 0, 87.5), (0, 1, 1, 100), (1, 0, 0, 0.1)):
        at = millis(hours(5, 1) + timedelta(minutes=minute))
        client.log_metric(first, f"system/gpu_{gpu}_utilization_percentage", percent, timestamp=at, step=step)
    client.log_metric(first, "system/cpu_utilization_percentage", 12, timestamp=millis(hours(5, 1)), step=0)
    client.set_terminated(first, "FAILED", end_time=millis(datetime(2026, 10, 5, 3, 30)))
    second = client.create_run(
        experiment,
        start_time=millis(hours(5, 4)),
        run_name="llm-m-attempt-2",
        tags={"training_run": "llm-m", "gpus": "8", "config_hash": "cfg-7"},
    ).info.run_id
    client.log_metric(second, "checkpoint", 1, timestamp=millis(hours(5, 6)), step=400)
    client.log_metric(second, "step_seconds", 3000.5, timestamp=millis(hours(5, 5)), step=300)
    client.log_metric(second, "data_wait_seconds", 600.25, timestamp=millis(hours(5, 5)) + 30_000, step=300)
    client.log_metric(second, "data_wait_seconds", 0.1, timestamp=millis(hours(5, 7)) - 60_000, step=500)
    client.log_metric(second, "step_seconds", 0.1, timestamp=millis(hours(5, 7)), step=500)
    client.log_metric(second, "system/node-1/gpu_0_utilization_percentage", 45.5, timestamp=millis(hours(5, 5)), step=0)
    client.set_terminated(second, "FINISHED", end_time=millis(hours(5, 10)))
    other = client.create_experiment("other")
    stray = client.create_run(other, start_time=millis(hours(5, 0)), tags={"training_run": "llm-x"}).info.run_id
    client.log_metric(stray, "system/gpu_0_utilization_percentage", 50, timestamp=millis(hours(5, 1)), step=0)
    return uri


def test_mlflow_runs_become_run_events(tracking_uri: str) -> None:
    events = mlflow_run_events(tracking_uri, [EXPERIMENT], "training_run")
    fields = sorted(
        (e.training_run, e.time, e.event, e.step, e.gpus, e.config_hash, e.step_seconds, e.data_wait_seconds)
        for e in events
    )
    assert fields == [
        ("llm-m", hours(5, 0), "start", 0, 16, "cfg-7", None, None),
        ("llm-m", hours(5, 2), "checkpoint", 200, None, "cfg-7", None, None),
        ("llm-m", datetime(2026, 10, 5, 3, 30), "failure", 200, None, "cfg-7", None, None),
        ("llm-m", hours(5, 4), "resume", 0, 8, "cfg-7", None, None),
        # each timed step at the later of its two values, exactly as logged; the end's step stays 400
        ("llm-m", datetime(2026, 10, 5, 5, 0, 30), "metrics", 300, None, "cfg-7", Decimal("3000.5"), Decimal("600.25")),
        ("llm-m", hours(5, 6), "checkpoint", 400, None, "cfg-7", None, None),
        ("llm-m", hours(5, 7), "metrics", 500, None, "cfg-7", Decimal("0.1"), Decimal("0.1")),
        ("llm-m", hours(5, 10), "end", 400, None, "cfg-7", None, None),
    ]
    assert all(e.origin.startswith(f"mlflow {tracking_uri} run ") for e in events)


def test_system_metrics_become_gpu_utilization_samples(tracking_uri: str) -> None:
    client = MlflowClient(tracking_uri=tracking_uri)
    experiment_id = client.get_experiment_by_name(EXPERIMENT).experiment_id
    first, second = (
        client.search_runs([experiment_id], f"attributes.run_name = 'llm-m-attempt-{attempt}'")[0].info.run_id
        for attempt in (1, 2)
    )

    def sample(run: str, gpu: str, time: datetime, utilization: str, key: str, step: int) -> GpuUtilizationSample:
        origin = f"mlflow {tracking_uri} run {run} metric {key} step {step}"
        return GpuUtilizationSample("llm-m", gpu, time, Decimal(utilization), origin)

    samples = mlflow_gpu_utilization(tracking_uri, [EXPERIMENT], "training_run")
    # percentages ÷ 100, exactly as logged; no CPU metric, no run of another experiment
    assert sorted(samples, key=lambda s: (s.time, s.gpu)) == [
        sample(first, "0", hours(5, 1), "0.875", "system/gpu_0_utilization_percentage", 0),
        sample(first, "1", hours(5, 1), "0.001", "system/gpu_1_utilization_percentage", 0),
        sample(first, "0", datetime(2026, 10, 5, 1, 1), "1", "system/gpu_0_utilization_percentage", 1),
        sample(second, "node-1/0", hours(5, 5), "0.455", "system/node-1/gpu_0_utilization_percentage", 0),
    ]


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
        build_waste(conn, WasteSettings())
    rows = dict(
        conn.execute(
            "select kind, sum(effective_cost) from waste where training_run = 'llm-m' group by kind"
        ).fetchall()
    )
    conn.close()
    # 24 GPU-hours at 300 / 120; idle: 2 of i-m's 12 hours after the 10:00 end
    assert rows == {"recompute_after_failure": Decimal(24) * 300 / 120, "idle_after_run": Decimal(300) * 2 / 12}


@pytest.fixture(scope="module")
def bad_tracking_uri(tmp_path_factory: pytest.TempPathFactory) -> str:
    """Two experiments of bad values: `half-timed` logs step_seconds at step 7 without
    data_wait_seconds; `over-full` logs a GPU busy 130 % of the time."""
    uri = f"sqlite:///{tmp_path_factory.mktemp('mlflow-bad') / 'mlflow.db'}"
    client = MlflowClient(tracking_uri=uri)
    half = client.create_run(client.create_experiment("half-timed"), start_time=millis(hours(5, 0))).info.run_id
    client.log_metric(half, "step_seconds", 30, timestamp=millis(hours(5, 1)), step=7)
    over = client.create_run(client.create_experiment("over-full"), start_time=millis(hours(5, 0))).info.run_id
    client.log_metric(over, "system/gpu_3_utilization_percentage", 130, timestamp=millis(hours(5, 1)), step=2)
    return uri


def test_a_step_with_one_timing_names_the_run_and_metric(bad_tracking_uri: str) -> None:
    client = MlflowClient(tracking_uri=bad_tracking_uri)
    (run,) = client.search_runs([client.get_experiment_by_name("half-timed").experiment_id])
    with pytest.raises(RunEventsError) as error:
        mlflow_run_events(bad_tracking_uri, ["half-timed"], "training_run")
    assert str(error.value) == (
        f"mlflow {bad_tracking_uri} run {run.info.run_id} step 7: data_wait_seconds: missing "
        "(step_seconds and data_wait_seconds are given together)"
    )


def test_a_utilization_over_100_percent_names_its_origin(bad_tracking_uri: str) -> None:
    client = MlflowClient(tracking_uri=bad_tracking_uri)
    (run,) = client.search_runs([client.get_experiment_by_name("over-full").experiment_id])
    with pytest.raises(RunEventsError) as error:
        mlflow_gpu_utilization(bad_tracking_uri, ["over-full"], "training_run")
    assert str(error.value) == (
        f"mlflow {bad_tracking_uri} run {run.info.run_id} metric system/gpu_3_utilization_percentage step 2: "
        "utilization: must be a percentage from 0 to 100, got 130.0"
    )
