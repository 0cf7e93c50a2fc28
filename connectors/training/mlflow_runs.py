"""Run events from MLflow runs, read through the MLflow tracking client (`mlflow-skinny`).

An MLflow run belongs to the training run named by its tag `training_run` (the tag key is
configurable), else to its run name. Its events:
- `start` at the run's start time (step 0; GPUs from the tag `gpus`); a training run made of
  several MLflow runs (one per restart) has its later runs' starts as `resume`;
- `checkpoint`, `failure`, `resume`: every value logged to the metric of that name, at the
  value's timestamp and step (for `resume` a value > 0 is the GPU count);
- at the run's end time: `failure` for a FAILED run, `end` for a FINISHED or KILLED one when it
  is the training run's last MLflow run (step: the largest step logged).
The tag `config_hash` gives the configuration hash.
"""

from __future__ import annotations

from collections import defaultdict
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from connectors.training.event_files import RunEvent, RunEventsError

if TYPE_CHECKING:
    from mlflow.entities import Run
    from mlflow.tracking import MlflowClient

EVENT_METRICS = ("checkpoint", "failure", "resume")
GPUS_TAG = "gpus"
CONFIG_HASH_TAG = "config_hash"
RUNS_PER_PAGE = 1000


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
    from mlflow.exceptions import MlflowException
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=tracking_uri)
    try:
        runs = _runs_of(client, tracking_uri, experiment_names)
        by_training_run: dict[str, list[Run]] = defaultdict(list)
        for run in runs:
            training_run = run.data.tags.get(training_run_tag) or run.info.run_name
            by_training_run[training_run].append(run)
        events = []
        for training_run, mlflow_runs in sorted(by_training_run.items()):
            mlflow_runs.sort(key=lambda run: (run.info.start_time, run.info.run_id))
            for position, run in enumerate(mlflow_runs):
                is_last = position == len(mlflow_runs) - 1
                events += _events_of(client, tracking_uri, training_run, run, first=position == 0, last=is_last)
    except MlflowException as error:
        raise RunEventsError(f"mlflow {tracking_uri}: {error.message}") from None
    return events


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
    return events


def _positive_int_tag(value: str | None, origin: str) -> int | None:
    if value is None:
        return None
    if not value.isdigit() or int(value) < 1:
        raise RunEventsError(f"{origin}: tag {GPUS_TAG}: must be an integer ≥ 1, got {value!r}")
    return int(value)


def _utc(millis: int) -> datetime:
    return datetime.fromtimestamp(millis / 1000, tz=UTC).replace(tzinfo=None)
