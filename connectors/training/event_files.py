"""Training-run event logs as JSON lines: one object per line, read strictly.

Each line: `training_run`, `time` (ISO-8601 with a UTC offset), `event` (start, checkpoint,
failure, resume, end, metrics), `step` (an integer ≥ 0), optionally `gpus` (an integer > 0),
`config_hash` (text), `tokens` (an integer ≥ 0: the tokens trained by the event), on a checkpoint
`duration_seconds` (a number > 0: how long writing the checkpoint took), and the step
timings `step_seconds` and `data_wait_seconds`: the seconds spent in training steps, and of them
waiting for input data, over the window from the run's previous event to this one (numbers ≥ 0,
read exactly as decimals, both or neither, the wait at most the step time). A `metrics` event
carries both timings and changes nothing else about the run: it is neither a start, nor a stop,
nor progress. Any problem is a `RunEventsError` naming the file and line.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

EVENT_KINDS = ("start", "checkpoint", "failure", "resume", "end", "metrics")
METRICS_EVENT = "metrics"
EVENT_FILE_SUFFIXES = (".jsonl", ".ndjson", ".json")
REQUIRED_KEYS = ("training_run", "time", "event", "step")
OPTIONAL_KEYS = ("gpus", "config_hash", "tokens", "duration_seconds", "step_seconds", "data_wait_seconds")
CHECKPOINT_EVENT = "checkpoint"
TIMING_KEYS = ("step_seconds", "data_wait_seconds")
SECONDS_LIMIT = Decimal(10) ** 28
"""Timings are stored as DECIMAL(38, 10): 28 digits before the point, so below 10^28."""
MAX_REPORTED_PROBLEMS = 20


class RunEventsError(ValueError):
    """A run event log that cannot be read; the message names the file and line (or MLflow run)."""


@dataclass(frozen=True)
class RunEvent:
    """One event of a training run.

    Attributes:
        training_run: the run id, as attribution knows it.
        time: when it happened, UTC (naive, like every warehouse timestamp).
        event: start, checkpoint, failure, resume, end or metrics.
        step: the optimizer step at the event.
        gpus: GPUs the run uses from this event on (start and resume), when known.
        config_hash: the hash of the run's training configuration, when known.
        origin: where the event was read: `file:line` or `mlflow:<run id>`.
        tokens: the tokens the run has trained by this event, when the log counts them.
        step_seconds: seconds spent in training steps since the run's previous event, when timed.
        data_wait_seconds: of those, the seconds spent waiting for input data (given with
            step_seconds).
        duration_seconds: on a checkpoint, the seconds writing it took, when logged.
    """

    training_run: str
    time: datetime
    event: str
    step: int
    gpus: int | None
    config_hash: str | None
    origin: str
    tokens: int | None = None
    step_seconds: Decimal | None = None
    data_wait_seconds: Decimal | None = None
    duration_seconds: Decimal | None = None


def event_files(path: Path) -> list[Path]:
    """The event file itself, or every `.jsonl`/`.ndjson`/`.json` file under a folder, sorted."""
    if path.is_file():
        return [path]
    return sorted(file for file in path.rglob("*") if file.is_file() and file.suffix in EVENT_FILE_SUFFIXES)


def read_event_files(path: Path) -> list[RunEvent]:
    """Reads and validates every event of a JSON-lines file or folder.

    Raises:
        RunEventsError: listing each bad line as `file:line: key: problem` (at most 20), or a
            file that is not UTF-8 text; also when one event (run, time, event) appears twice.
    """
    events: list[RunEvent] = []
    problems: list[str] = []
    for file in event_files(path):
        try:
            text = file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            raise RunEventsError(f"{file}: cannot read the file as UTF-8 text: {error}") from None
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                events.append(parse_event_line(line, f"{file}:{number}"))
            except RunEventsError as error:
                problems.append(str(error))
    problems += repeated_events(events)
    if problems:
        shown = problems[:MAX_REPORTED_PROBLEMS]
        more = len(problems) - len(shown)
        raise RunEventsError("\n".join(shown + ([f"… and {more} more problems"] if more else [])))
    return events


def parse_event_line(line: str, origin: str) -> RunEvent:
    """Parses one JSON line into a `RunEvent`.

    Raises:
        RunEventsError: `origin: key: problem` for the first problem of the line.
    """
    try:
        document = json.loads(line, parse_float=Decimal)
    except json.JSONDecodeError as error:
        raise RunEventsError(f"{origin}: not a JSON object: {error.msg} (column {error.colno})") from None
    if not isinstance(document, dict):
        raise RunEventsError(f"{origin}: not a JSON object")
    unknown = sorted(set(document) - set(REQUIRED_KEYS) - set(OPTIONAL_KEYS))
    if unknown:
        raise RunEventsError(
            f"{origin}: {', '.join(unknown)}: unknown key (keys: {', '.join(REQUIRED_KEYS + OPTIONAL_KEYS)})"
        )
    missing = [key for key in REQUIRED_KEYS if document.get(key) is None]
    if missing:
        raise RunEventsError(f"{origin}: {', '.join(missing)}: missing")
    training_run = document["training_run"]
    if not isinstance(training_run, str) or not training_run.strip():
        raise RunEventsError(f"{origin}: training_run: must be non-empty text, got {training_run!r}")
    event = document["event"]
    if event not in EVENT_KINDS:
        raise RunEventsError(f"{origin}: event: {event!r} is not one of {', '.join(EVENT_KINDS)}")
    step = _integer(document["step"], origin, "step", minimum=0)
    gpus = None if document.get("gpus") is None else _integer(document["gpus"], origin, "gpus", minimum=1)
    tokens = None if document.get("tokens") is None else _integer(document["tokens"], origin, "tokens", minimum=0)
    config_hash = document.get("config_hash")
    if config_hash is not None and (not isinstance(config_hash, str) or not config_hash.strip()):
        raise RunEventsError(f"{origin}: config_hash: must be non-empty text, got {config_hash!r}")
    step_seconds, data_wait_seconds = step_timings(
        document.get("step_seconds"), document.get("data_wait_seconds"), origin, required=event == METRICS_EVENT
    )
    return RunEvent(
        training_run=training_run.strip(),
        time=parse_utc_time(document["time"], origin),
        event=event,
        step=step,
        gpus=gpus,
        config_hash=config_hash.strip() if config_hash else None,
        origin=origin,
        tokens=tokens,
        step_seconds=step_seconds,
        data_wait_seconds=data_wait_seconds,
        duration_seconds=checkpoint_duration(document.get("duration_seconds"), event, origin),
    )


def checkpoint_duration(duration_seconds: object, event: str, origin: str) -> Decimal | None:
    """Checks a checkpoint's write time: a number > 0, on a checkpoint event only.

    Args:
        duration_seconds: the value given for `duration_seconds` (None: not given).
        event: the event's kind.
        origin: where the event was read, the start of every message.

    Raises:
        RunEventsError: `origin: duration_seconds: problem`.
    """
    if duration_seconds is None:
        return None
    if event != CHECKPOINT_EVENT:
        raise RunEventsError(f"{origin}: duration_seconds: only a checkpoint event has a write time, not {event}")
    return _seconds(duration_seconds, origin, "duration_seconds", positive=True)


def step_timings(
    step_seconds: object, data_wait_seconds: object, origin: str, *, required: bool
) -> tuple[Decimal | None, Decimal | None]:
    """Checks an event's step timings: numbers ≥ 0, both or neither, the wait within the step time.

    Args:
        step_seconds: the value given for `step_seconds` (None: not given).
        data_wait_seconds: the value given for `data_wait_seconds` (None: not given).
        origin: where the event was read, the start of every message.
        required: the event must carry both (a `metrics` event).

    Returns:
        The two timings as exact decimals, or (None, None) when neither is given.

    Raises:
        RunEventsError: `origin: key: problem`.
    """
    given = {"step_seconds": step_seconds, "data_wait_seconds": data_wait_seconds}
    missing = [key for key, value in given.items() if value is None]
    if required and missing:
        raise RunEventsError(f"{origin}: {', '.join(missing)}: missing (a metrics event carries {' and '.join(given)})")
    if len(missing) == len(given):
        return None, None
    if missing:
        raise RunEventsError(f"{origin}: {missing[0]}: missing ({' and '.join(given)} are given together)")
    step, wait = (_seconds(value, origin, key) for key, value in given.items())
    if wait > step:
        raise RunEventsError(f"{origin}: data_wait_seconds: must be at most step_seconds ({step}), got {wait}")
    return step, wait


def parse_utc_time(value: object, origin: str) -> datetime:
    """An ISO-8601 time with an explicit offset (`Z` or `+00:00` …), as naive UTC.

    Raises:
        RunEventsError: the value is not such a time; a time without offset is ambiguous.
    """
    if not isinstance(value, str):
        raise RunEventsError(f"{origin}: time: must be ISO-8601 text such as 2026-10-03T06:00:00Z, got {value!r}")
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        raise RunEventsError(
            f"{origin}: time: {value!r} is not an ISO-8601 time such as 2026-10-03T06:00:00Z"
        ) from None
    if moment.tzinfo is None:
        raise RunEventsError(f"{origin}: time: {value!r} has no UTC offset; write it as UTC, e.g. {value}Z")
    return moment.astimezone(UTC).replace(tzinfo=None)


def repeated_events(events: list[RunEvent]) -> list[str]:
    """One problem per event recorded twice (same run, time and kind), naming both places."""
    first_seen: dict[tuple[str, datetime, str], str] = {}
    problems = []
    for event in events:
        key = (event.training_run, event.time, event.event)
        if key in first_seen:
            problems.append(
                f"{event.origin}: {event.event} of {event.training_run!r} at {event.time:%Y-%m-%dT%H:%M:%S}Z "
                f"is already recorded at {first_seen[key]}"
            )
        else:
            first_seen[key] = event.origin
    return problems


def _integer(value: object, origin: str, key: str, *, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise RunEventsError(f"{origin}: {key}: must be an integer ≥ {minimum}, got {_shown(value)}")
    return value


def _seconds(value: object, origin: str, key: str, *, positive: bool = False) -> Decimal:
    """A number of seconds ≥ 0 (> 0 when `positive`) as an exact decimal (JSON numbers arrive as
    int or Decimal)."""
    number = Decimal(value) if isinstance(value, int | Decimal) and not isinstance(value, bool) else None
    if number is None or not number.is_finite() or number < 0 or (positive and number == 0):
        raise RunEventsError(f"{origin}: {key}: must be a number {'>' if positive else '≥'} 0, got {_shown(value)}")
    if number >= SECONDS_LIMIT:
        raise RunEventsError(f"{origin}: {key}: must be below 10^28 seconds, got {number}")
    return number


def _shown(value: object) -> str:
    """A value as the line wrote it: a JSON number as written, anything else as its repr."""
    return str(value) if isinstance(value, Decimal) else repr(value)
