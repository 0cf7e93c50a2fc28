"""Run events from MLflow runs, read through the MLflow tracking client (`mlflow-skinny`).

An MLflow run belongs to the training run named by its tag `training_run` (the tag key is
configurable), else to its run name. Its events:
- `start` at the run's start time (step 0; GPUs from the tag `gpus`); a training run made of
  several MLflow runs (one per restart) has its later runs' starts as `resume`;
- `checkpoint`, `failure`, `resume`: every value logged to the metric of that name, at the
  value's timestamp and step (for `resume` a value > 0 is the GPU count);
- at the run's end time: `failure` for a FAILED run, `end` for a FINISHED or KILLED one when it
  is the training run's last MLflow run (step: the largest step logged to those metrics);
- `metrics` at every step logged to both metrics `step_seconds` and `data_wait_seconds` (at the
  later of the two values' timestamps): the step timings since the previous event.
The tag `config_hash` gives the configuration hash.

MLflow's system metrics `system/gpu_<N>_utilization_percentage` (with a node id,
`system/<node>/gpu_<N>_utilization_percentage`) give the GPU utilization samples of the same
training runs (`mlflow_gpu_utilization`).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from typing import TYPE_CHECKING

from connectors.training.event_files import METRICS_EVENT, TIMING_KEYS, RunEvent, RunEventsError, step_timings

if TYPE_CHECKING:
    from mlflow.entities import Metric, Run
    from mlflow.tracking import MlflowClient

EVENT_METRICS = ("checkpoint", "failure", "resume")
GPUS_TAG = "gpus"
CONFIG_HASH_TAG = "config_hash"
RUNS_PER_PAGE = 1000
GPU_UTILIZATION_METRIC = re.compile(r"system/(?:(?P<node>.+)/)?gpu_(?P<gpu>\d+)_utilization_percentage")


@dataclass(frozen=True)
class GpuUtilizationSample:
    """One GPU utilization sample of a training run, from MLflow's system metrics.

    Attributes:
        training_run: the run id, as attribution knows it.
        gpu: the GPU's index N of `system/gpu_N_utilization_percentage` (`<node>/<N>` when the
            metric names a node).
        time: when it was sampled, UTC (naive, like every warehouse timestamp).
        utilization: the share of the time the GPU was busy, 0 to 1 (the percentage ÷ 100).
        origin: `mlflow <uri> run <run id> metric <key> step <step>`.
    """

    training_run: str
    gpu: str
    time: datetime
    utilization: Decimal
    origin: str


def mlflow_run_events(tracking_uri: str, experiment_names: list[str], training_run_tag: str) -> list[RunEvent]:
    """Every event of the MLflow runs in the named experiments.

    Args:
        tracking_uri: the MLflow tracking URI (`sqlite:///…`, `http://…`, `databricks`, a folder).
        experiment_names: the experiments to read; each must exist.
        training_run_tag: the run tag naming the training run (fallback: the MLflow run name).

    Raises:
        RunEventsError: an experiment does not exist, the store cannot be read, or a tag holds
            a bad value; the message names the tracking URI and the MLflow run.
    """
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=tracking_uri)
    events = []
    with _store_errors(tracking_uri):
        for training_run, mlflow_runs in _training_runs(client, tracking_uri, experiment_names, training_run_tag):
            for position, run in enumerate(mlflow_runs):
                is_last = position == len(mlflow_runs) - 1
                events += _events_of(client, tracking_uri, training_run, run, first=position == 0, last=is_last)
    return events


def mlflow_gpu_utilization(
    tracking_uri: str, experiment_names: list[str], training_run_tag: str
) -> list[GpuUtilizationSample]:
    """Every GPU utilization sample MLflow's system metrics logged on the runs of the named
    experiments, each for the training run the MLflow run belongs to (as for `mlflow_run_events`).

    Args:
        tracking_uri: the MLflow tracking URI.
        experiment_names: the experiments to read; each must exist.
        training_run_tag: the run tag naming the training run (fallback: the MLflow run name).

    Raises:
        RunEventsError: an experiment does not exist, the store cannot be read, or a value is
            not a percentage from 0 to 100 (naming the run, metric and step).
    """
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=tracking_uri)
    samples = []
    with _store_errors(tracking_uri):
        for training_run, mlflow_runs in _training_runs(client, tracking_uri, experiment_names, training_run_tag):
            for run in mlflow_runs:
                samples += _utilization_samples(client, tracking_uri, training_run, run)
    return samples


@contextmanager
def _store_errors(tracking_uri: str) -> Iterator[None]:
    """Turns the MLflow client's errors into a `RunEventsError` naming the tracking URI."""
    from mlflow.exceptions import MlflowException

    try:
        yield
    except MlflowException as error:
        raise RunEventsError(f"mlflow {tracking_uri}: {error.message}") from None


def _training_runs(
    client: MlflowClient, tracking_uri: str, experiment_names: list[str], training_run_tag: str
) -> list[tuple[str, list[Run]]]:
    """The MLflow runs of each training run (its tag, else its run name), by training run and
    then by start time."""
    by_training_run: dict[str, list[Run]] = defaultdict(list)
    for run in _runs_of(client, tracking_uri, experiment_names):
        by_training_run[run.data.tags.get(training_run_tag) or run.info.run_name].append(run)
    return [
        (training_run, sorted(runs, key=lambda run: (run.info.start_time, run.info.run_id)))
        for training_run, runs in sorted(by_training_run.items())
    ]


def _runs_of(client: MlflowClient, tracking_uri: str, experiment_names: list[str]) -> list[Run]:
    experiment_ids = []
    for name in experiment_names:
        experiment = client.get_experiment_by_name(name)
        if experiment is None:
            raise RunEventsError(f"mlflow {tracking_uri}: experiment_names: no experiment {name!r}")
        experiment_ids.append(experiment.experiment_id)
    runs, page_token = [], None
    while True:
        page = client.search_runs(experiment_ids, max_results=RUNS_PER_PAGE, page_token=page_token)
        runs += list(page)
        page_token = page.token
        if not page_token:
            return runs


def _events_of(
    client: MlflowClient, tracking_uri: str, training_run: str, run: Run, *, first: bool, last: bool
) -> list[RunEvent]:
    origin = f"mlflow {tracking_uri} run {run.info.run_id}"
    tags = run.data.tags
    gpus = _positive_int_tag(tags.get(GPUS_TAG), origin)
    config_hash = tags.get(CONFIG_HASH_TAG) or None

    def event(kind: str, millis: int, step: int, event_gpus: int | None = None) -> RunEvent:
        return RunEvent(training_run, _utc(millis), kind, step, event_gpus, config_hash, origin)

    events = [event("start" if first else "resume", run.info.start_time, 0, gpus)]
    largest_step = 0
    for metric in EVENT_METRICS:
        if metric not in run.data.metrics:
            continue
        for value in client.get_metric_history(run.info.run_id, metric):
            resume_gpus = int(value.value) if metric == "resume" and value.value > 0 else None
            events.append(event(metric, value.timestamp, value.step, resume_gpus))
            largest_step = max(largest_step, value.step)
    if run.info.end_time is not None:
        if run.info.status == "FAILED":
            events.append(event("failure", run.info.end_time, largest_step))
        elif run.info.status in ("FINISHED", "KILLED") and last:
            events.append(event("end", run.info.end_time, largest_step))
    return events + _metrics_events(client, origin, training_run, run, config_hash)


def _metrics_events(
    client: MlflowClient, origin: str, training_run: str, run: Run, config_hash: str | None
) -> list[RunEvent]:
    """A `metrics` event per step logged to both timing metrics; a step with one of them is an error."""
    by_step: dict[int, dict[str, Metric]] = defaultdict(dict)
    for metric in TIMING_KEYS:
        if metric not in run.data.metrics:
            continue
        for value in client.get_metric_history(run.info.run_id, metric):
            if metric in by_step[value.step]:
                raise RunEventsError(f"{origin} step {value.step}: {metric}: logged more than once at this step")
            by_step[value.step][metric] = value
    events = []
    for step, values in sorted(by_step.items()):
        step_seconds, data_wait_seconds = step_timings(
            *(_exact(values[key].value) if key in values else None for key in TIMING_KEYS),
            f"{origin} step {step}",
            required=False,
        )
        millis = max(value.timestamp for value in values.values())
        events.append(
            RunEvent(
                training_run,
                _utc(millis),
                METRICS_EVENT,
                step,
                None,
                config_hash,
                origin,
                step_seconds=step_seconds,
                data_wait_seconds=data_wait_seconds,
            )
        )
    return events


def _utilization_samples(
    client: MlflowClient, tracking_uri: str, training_run: str, run: Run
) -> list[GpuUtilizationSample]:
    samples = []
    for key in sorted(run.data.metrics):
        matched = GPU_UTILIZATION_METRIC.fullmatch(key)
        if matched is None:
            continue
        gpu = "/".join(part for part in matched.group("node", "gpu") if part is not None)
        for value in client.get_metric_history(run.info.run_id, key):
            origin = f"mlflow {tracking_uri} run {run.info.run_id} metric {key} step {value.step}"
            samples.append(
                GpuUtilizationSample(training_run, gpu, _utc(value.timestamp), _fraction(value.value, origin), origin)
            )
    return samples


def _positive_int_tag(value: str | None, origin: str) -> int | None:
    if value is None:
        return None
    if not value.isdigit() or int(value) < 1:
        raise RunEventsError(f"{origin}: tag {GPUS_TAG}: must be an integer ≥ 1, got {value!r}")
    return int(value)


def _fraction(percentage: float, origin: str) -> Decimal:
    """A utilization percentage as a share from 0 to 1, exactly."""
    percent = _exact(percentage)
    if not percent.is_finite() or not 0 <= percent <= 100:
        raise RunEventsError(f"{origin}: utilization: must be a percentage from 0 to 100, got {percentage}")
    return percent / 100


def _exact(value: float) -> Decimal:
    """The decimal a logged float stands for: its shortest repr, without the binary digits."""
    return Decimal(repr(value))


def _utc(millis: int) -> datetime:
    return datetime.fromtimestamp(millis / 1000, tz=UTC).replace(tzinfo=None)
