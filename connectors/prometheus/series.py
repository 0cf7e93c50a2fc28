"""What both clients return (`Series`), the interface they share and the parsing of a
`query_range` response body."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from decimal import Decimal, InvalidOperation
from typing import Protocol

from connectors.errors import SourceError


@dataclass(frozen=True)
class Series:
    """One series of a range query's answer.

    Attributes:
        labels: its labels, `__name__` (the metric) included where the query keeps it.
        samples: (time, value) in time order; times naive UTC, values exact decimals.
    """

    labels: Mapping[str, str]
    samples: tuple[tuple[datetime, Decimal], ...]

    @property
    def metric(self) -> str | None:
        """The metric name, None when the query dropped it."""
        return self.labels.get("__name__")


class PrometheusClient(Protocol):
    """A Prometheus to ask range queries of."""

    @property
    def location(self) -> str:
        """The server's URL or the saved responses' folder, for messages."""
        ...

    def query_range(self, query: str, start: datetime, end: datetime, step_seconds: int) -> list[Series]:
        """The series `query` gives, evaluated every `step_seconds` from `start` to `end` (naive
        UTC, both included)."""
        ...


def to_unix(moment: datetime) -> int | float:
    """A naive UTC datetime as Unix seconds (whole seconds as an int)."""
    seconds = moment.replace(tzinfo=UTC).timestamp()
    return int(seconds) if seconds.is_integer() else seconds


def on_grid(moment: datetime, step: timedelta, up: bool) -> datetime:
    """The evaluation time of a range query at `step` (whole multiples of it in Unix time) at or
    after `moment` (`up`), else at or before it."""
    epoch = datetime(1970, 1, 1)
    below = moment - (moment - epoch) % step
    return below + step if up and below < moment else below


def from_unix(seconds: Decimal) -> datetime:
    """Unix seconds (Prometheus's sample times, to the millisecond) as a naive UTC datetime."""
    return datetime.fromtimestamp(float(seconds), UTC).replace(tzinfo=None)


def parse_response(text: str | bytes, origin: str, query: str) -> list[Series]:
    """The series of a `query_range` response body.

    Args:
        text: the body, JSON.
        origin: the server's URL or the file, for messages.
        query: the query it answers, for messages.

    Raises:
        SourceError: not JSON, `"status": "error"`, or not a matrix of series.
    """
    try:
        body = json.loads(text, parse_float=Decimal, parse_int=Decimal)
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise SourceError(f"{origin}: not JSON for query {query!r} ({error})") from error
    if not isinstance(body, dict) or body.get("status") not in ("success", "error"):
        raise SourceError(f"{origin}: not a Prometheus query_range response for query {query!r}")
    if body["status"] == "error":
        raise SourceError(f"{origin}: Prometheus answered {_error_text(body)} for query {query!r}")
    data = body.get("data")
    if not isinstance(data, dict) or data.get("resultType") != "matrix" or not isinstance(data.get("result"), list):
        raise SourceError(f"{origin}: the answer to query {query!r} is not a range query's matrix of series")
    return [_series(entry, origin, query) for entry in data["result"]]


def prometheus_error(text: str | bytes) -> str | None:
    """The error a Prometheus error body (`"status": "error"`) gives, as `<errorType>: <error>`;
    None for any other body."""
    try:
        body = json.loads(text)
    except (json.JSONDecodeError, UnicodeDecodeError):
        return None
    return _error_text(body) if isinstance(body, dict) and body.get("status") == "error" else None


def _error_text(body: dict) -> str:
    return f"{body.get('errorType', 'error')}: {body.get('error', '')}"


def _series(entry: object, origin: str, query: str) -> Series:
    if not isinstance(entry, dict) or not isinstance(entry.get("metric"), dict):
        raise SourceError(f"{origin}: a series without labels in the answer to query {query!r}")
    labels = {str(key): str(value) for key, value in entry["metric"].items()}
    values = entry.get("values")
    if not isinstance(values, list):
        raise SourceError(f"{origin}: series {shown(labels)} has no values in the answer to query {query!r}")
    samples = []
    for sample in values:
        try:
            timestamp, value = sample
            samples.append((from_unix(Decimal(timestamp)), Decimal(value)))
        except (TypeError, ValueError, InvalidOperation, OverflowError) as error:
            raise SourceError(
                f'{origin}: series {shown(labels)} has a sample {sample!r} that is not [time, "value"] '
                f"in the answer to query {query!r}"
            ) from error
    return Series(labels=labels, samples=tuple(samples))


def shown(labels: Mapping[str, str]) -> str:
    """A series as PromQL writes it: `metric{label="value",...}`."""
    name = labels.get("__name__", "")
    rest = ",".join(f'{key}="{value}"' for key, value in sorted(labels.items()) if key != "__name__")
    return f"{name}{{{rest}}}"


def merge(parts: Iterable[Series]) -> list[Series]:
    """Series with the same labels (one range's chunks, or several saved files) as one series,
    samples in time order, a time present twice kept once."""
    merged: dict[frozenset[tuple[str, str]], dict[datetime, Decimal]] = {}
    for series in parts:
        samples = merged.setdefault(frozenset(series.labels.items()), {})
        for moment, value in series.samples:
            samples.setdefault(moment, value)
    return [Series(labels=dict(key), samples=tuple(sorted(samples.items()))) for key, samples in merged.items()]
