"""The settings every source read through Prometheus range queries shares (`PrometheusRange`: a
server or saved responses, over a time range at a step): `kubernetes` and `prometheus` sources."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import Field, field_validator, model_validator

from pipelines.sources.kind import SourceSettings

if TYPE_CHECKING:
    from connectors.prometheus import PrometheusClient


class PrometheusRange(SourceSettings):
    """A source read through Prometheus range queries: a server's HTTP API (`url`) or a folder of
    its saved `query_range` responses (`path`), every `step` seconds.

    The range read is [`start`, `end`] when `start` is given (`end` defaults to the time of the
    run), else the `lookback_days` before the run (35: a billing month and its late lines).
    """

    url: str | None = None
    path: str | None = None
    step: int = Field(default=60, ge=1, le=86_400)
    lookback_days: int = Field(default=35, ge=1)
    start: datetime | None = None
    end: datetime | None = None
    timeout: float = Field(default=60, gt=0)

    @field_validator("start", "end")
    @classmethod
    def _utc(cls, moment: datetime | None) -> datetime | None:
        if moment is None or moment.tzinfo is None:
            return moment
        return moment.astimezone(UTC).replace(tzinfo=None)

    @model_validator(mode="after")
    def _one_origin(self) -> PrometheusRange:
        if (self.url is None) == (self.path is None):
            raise ValueError("give exactly one of `url` (a Prometheus server) or `path` (saved responses)")
        if self.url is not None and not self.url.startswith(("http://", "https://")):
            raise ValueError(f"url {self.url!r} is not an http:// or https:// URL")
        if self.path is not None and "timeout" in self.model_fields_set:
            raise ValueError("`timeout` applies to `url` (a Prometheus server) only")
        if self.start is not None and "lookback_days" in self.model_fields_set:
            raise ValueError("give `start` (with `end`) or `lookback_days`, not both")
        if self.end is not None and self.start is None:
            raise ValueError("`end` needs a `start`")
        if self.start is not None and self.end is not None and self.start >= self.end:
            raise ValueError(f"start {self.start:%Y-%m-%dT%H:%M:%S} is not before end {self.end:%Y-%m-%dT%H:%M:%S}")
        return self

    def window(self, now: datetime) -> tuple[datetime, datetime, bool]:
        """The range to read (naive UTC) and whether it ends at the run (`now`).

        Args:
            now: the time of the run, naive UTC.
        """
        if self.start is not None:
            return self.start, self.end or now, self.end is None
        return now - timedelta(days=self.lookback_days), now, True

    def client(self, resolve: Callable[[str], Path]) -> PrometheusClient:
        """The server, or the folder of saved responses (resolved against the configuration's folder)."""
        from connectors.prometheus import HttpPrometheus, SavedPrometheus

        return HttpPrometheus(self.url, self.timeout) if self.url else SavedPrometheus(resolve(self.path or ""))

    def local_path(self) -> tuple[str, str] | None:
        return ("path", self.path) if self.path else None
