"""`HttpPrometheus`: range queries over a Prometheus server's HTTP API."""

from __future__ import annotations

from datetime import datetime, timedelta

import requests

from connectors.errors import SourceError
from connectors.prometheus.series import Series, merge, parse_response, prometheus_error, to_unix

MAX_POINTS_PER_SERIES = 11_000
"""Prometheus refuses a range query whose series would have more points than this."""


def chunks(start: datetime, end: datetime, step_seconds: int) -> list[tuple[datetime, datetime]]:
    """[start, end] as consecutive ranges of at most MAX_POINTS_PER_SERIES evaluation times each, on
    the grid start + k * step (each range starts one step after the previous one ends)."""
    step = timedelta(seconds=step_seconds)
    span = step * (MAX_POINTS_PER_SERIES - 1)
    ranges = []
    while start <= end:
        ranges.append((start, min(start + span, end)))
        start += span + step
    return ranges


class HttpPrometheus:
    """A Prometheus server (or anything answering its HTTP API: Thanos, Mimir, VictoriaMetrics).

    Args:
        url: the server's base URL, e.g. `http://prometheus.monitoring:9090` (a path prefix such
            as `/prometheus` included where the server is served under one).
        timeout: seconds to wait for each request.
    """

    def __init__(self, url: str, timeout: float = 60) -> None:
        self._url = url.rstrip("/")
        self._timeout = timeout

    @property
    def location(self) -> str:
        return self._url

    def query_range(self, query: str, start: datetime, end: datetime, step_seconds: int) -> list[Series]:
        """The series `query` gives every `step_seconds` from `start` to `end` (naive UTC), asked
        in as many requests as the 11,000-points limit needs and merged.

        Raises:
            SourceError: the server is unreachable, answers an HTTP error or `"status": "error"`,
                or its answer is not a range query's JSON; the message names the URL and query.
        """
        parts: list[Series] = []
        for chunk_start, chunk_end in chunks(start, end, step_seconds):
            parts.extend(self._query(query, chunk_start, chunk_end, step_seconds))
        return merge(parts)

    def _query(self, query: str, start: datetime, end: datetime, step_seconds: int) -> list[Series]:
        endpoint = f"{self._url}/api/v1/query_range"
        params = {"query": query, "start": to_unix(start), "end": to_unix(end), "step": step_seconds}
        try:
            response = requests.get(endpoint, params=params, timeout=self._timeout)
        except requests.RequestException as error:
            raise SourceError(f"Prometheus at {self._url} is unreachable for query {query!r}: {error}") from error
        if response.status_code != 200:
            detail = prometheus_error(response.content) or response.text[:300]
            raise SourceError(
                f"Prometheus at {self._url} answered HTTP {response.status_code} for query {query!r}: {detail}"
            )
        return parse_response(response.content, f"Prometheus at {self._url}", query)
