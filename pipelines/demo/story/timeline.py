"""A training run's timeline: the checkpoints it has saved by a moment, and its event log (JSON
lines of start, checkpoint, failure, resume and end, as the waste analysis reads them)."""

from __future__ import annotations

import math
from datetime import datetime, timedelta

from pipelines.demo.periods import HOUR


def checkpoints_saved(run_start: datetime, run_end: datetime, every: timedelta, moment: datetime) -> int:
    return math.floor((min(moment, run_end) - run_start) / every) if moment > run_start else 0


def run_event(run: str, moment: datetime, event: str, step: int, **extra: object) -> dict:
    return {"training_run": run, "time": f"{moment:%Y-%m-%dT%H:%M:%S}Z", "event": event, "step": step, **extra}


def clean_run_events(
    run: str, start: datetime, end: datetime, every: timedelta, gpus: int, steps_per_hour: int, config_hash: str
) -> list[dict]:
    """A run without incidents: start, a checkpoint every `every`, end."""

    def step_at(moment: datetime) -> int:
        return round((moment - start) / HOUR * steps_per_hour)

    events = [run_event(run, start, "start", 0, gpus=gpus, config_hash=config_hash)]
    moment = start + every
    while moment <= end:
        events.append(run_event(run, moment, "checkpoint", step_at(moment)))
        moment += every
    events.append(run_event(run, end, "end", step_at(end)))
    return events
