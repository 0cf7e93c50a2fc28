"""`SavedPrometheus`: range queries answered from saved `query_range` responses.

A folder holds, for each metric, the JSON bodies Prometheus answered to
`GET /api/v1/query_range?query=<metric>&start=…&end=…&step=…`, as `curl` writes them:

    <folder>/<metric>.json            the whole range in one file, or
    <folder>/<metric>.<part>.json     several files (any <part>: `1`, `2026-11`, …), e.g. a long
                                      range saved in pieces of at most 11,000 points

The files are saved with the plain selector `<metric>` (or one narrowing it with label
matchers), so that every series carries its `__name__`. A query asked of the folder must be a
series selector, `metric{label="value",...}` with `=`, `!=`, `=~`, `!~` matchers: it is answered
with the saved series of that metric its matchers select, their samples from `start` to `end`.
The files must have been saved at the step asked for.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from datetime import datetime, timedelta
from itertools import pairwise
from pathlib import Path

from connectors.errors import SourceError
from connectors.prometheus.series import Series, merge, parse_response, shown

SELECTOR = re.compile(r"\s*(?P<metric>[A-Za-z_:][A-Za-z0-9_:]*)\s*(?:\{(?P<matchers>.*)\})?\s*", re.DOTALL)
MATCHER = re.compile(r'\s*(?P<label>[A-Za-z_][A-Za-z0-9_]*)\s*(?P<op>=~|!~|!=|=)\s*"(?P<value>(?:[^"\\]|\\.)*)"\s*')

Matcher = Callable[[dict[str, str]], bool]


def parse_selector(query: str) -> tuple[str, list[Matcher]]:
    """The metric name and label matchers of a series selector.

    Raises:
        SourceError: the query is not a selector `metric{label="value",...}`.
    """
    found = SELECTOR.fullmatch(query)
    if found is None:
        raise SourceError(f'saved responses answer series selectors metric{{label="value"}} only, not {query!r}')
    matchers: list[Matcher] = []
    text = (found["matchers"] or "").strip().rstrip(",")
    for part in _split_matchers(text, query) if text else []:
        matcher = MATCHER.fullmatch(part)
        if matcher is None:
            raise SourceError(f"saved responses answer series selectors only: {part.strip()!r} in {query!r}")
        matchers.append(_matcher(matcher["label"], matcher["op"], json.loads(f'"{matcher["value"]}"')))
    return found["metric"], matchers


def _split_matchers(text: str, query: str) -> list[str]:
    parts, current, quoted, escaped = [], "", False, False
    for char in text:
        if char == "," and not quoted:
            parts.append(current)
            current = ""
            continue
        current += char
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == '"':
            quoted = not quoted
    if quoted:
        raise SourceError(f"an unterminated string in the selector {query!r}")
    return [*parts, current]


def _matcher(label: str, op: str, value: str) -> Matcher:
    if op in ("=~", "!~"):
        pattern = re.compile(value)
        wanted = op == "=~"
        return lambda labels: (pattern.fullmatch(labels.get(label, "")) is not None) == wanted
    return lambda labels: (labels.get(label, "") == value) == (op == "=")


class SavedPrometheus:
    """Saved `query_range` responses in a folder (see the module's docstring for its files).

    Args:
        folder: the folder of `<metric>.json` and `<metric>.<part>.json` files.
    """

    def __init__(self, folder: Path) -> None:
        self._folder = folder

    @property
    def location(self) -> str:
        return str(self._folder)

    def query_range(self, query: str, start: datetime, end: datetime, step_seconds: int) -> list[Series]:
        """The saved series `query` (a selector) selects, their samples from `start` to `end`.

        Raises:
            SourceError: the query is not a selector; the folder has no file of its metric; a file
                is not a `query_range` response, holds series of another metric or without one, or
                was saved at another step. The message names the folder or file and the query.
        """
        metric, matchers = parse_selector(query)
        files = self._files(metric, query)
        parts = []
        for file in files:
            for series in parse_response(_read(file, query), str(file), query):
                if series.metric != metric:
                    raise SourceError(
                        f"{file}: holds a series of {series.metric or 'no metric'!r} ({shown(series.labels)}), not "
                        f"{metric!r}: save the response of the plain selector {metric}"
                    )
                _check_step(series, step_seconds, file, query)
                parts.append(series)
        selected = []
        for series in merge(parts):
            if all(matches(dict(series.labels)) for matches in matchers):
                samples = tuple(sample for sample in series.samples if start <= sample[0] <= end)
                if samples:
                    selected.append(Series(labels=series.labels, samples=samples))
        return selected

    def saved(self, metric: str) -> bool:
        """Whether the folder holds a response of `metric` (a metric an exporter may not export)."""
        return self._folder.is_dir() and bool(self._metric_files(metric))

    def _metric_files(self, metric: str) -> list[Path]:
        return sorted({*self._folder.glob(f"{metric}.json"), *self._folder.glob(f"{metric}.*.json")})

    def _files(self, metric: str, query: str) -> list[Path]:
        if not self._folder.is_dir():
            raise SourceError(f"{self._folder}: not a folder of saved Prometheus responses (query {query!r})")
        files = self._metric_files(metric)
        if not files:
            raise SourceError(
                f"{self._folder}: no saved response of {metric} for query {query!r}: save the query_range "
                f"response of {metric} as {metric}.json (or {metric}.<part>.json files)"
            )
        return files


def _read(file: Path, query: str) -> bytes:
    try:
        return file.read_bytes()
    except OSError as error:
        raise SourceError(f"{file}: cannot be read for query {query!r}: {error}") from error


def _check_step(series: Series, step_seconds: int, file: Path, query: str) -> None:
    step = timedelta(seconds=step_seconds)
    for (before, _), (after, _) in pairwise(series.samples):
        if (after - before) % step:
            raise SourceError(
                f"{file}: series {shown(series.labels)} has samples {after - before} apart at "
                f"{after:%Y-%m-%dT%H:%M:%S}, not a multiple of the step {step_seconds} s: save it with "
                f"step={step_seconds} (query {query!r})"
            )
