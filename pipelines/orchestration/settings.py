"""How the nightly run is scheduled and which warnings its checks raise (`orchestration:`)."""

from __future__ import annotations

from datetime import UTC, datetime
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import Field, field_validator

from pipelines.config_rules import StrictModel


class Orchestration(StrictModel):
    """How the nightly run is scheduled and which warnings its checks raise (`orchestration:`)."""

    cron: str = "0 6 * * *"
    timezone: str = "UTC"
    freshness_max_age_hours: float = Field(default=72, gt=0)
    # The moment freshness is judged at instead of the clock: for a project of past exports (the
    # demo, an archive, a replay) whose newest charge can never be recent.
    freshness_as_of: datetime | None = None
    untagged_share_threshold: float = Field(default=0.25, ge=0, le=1)
    sensor_interval_seconds: int = Field(default=300, ge=30)
    maintenance_cron: str = "0 5 * * 0"  # weekly, Sunday 05:00
    snapshot_retention_days: int = Field(default=90, ge=1)

    @field_validator("cron", "maintenance_cron")
    @classmethod
    def _valid_cron(cls, value: str) -> str:
        fields = value.split()
        if len(fields) != 5:
            raise ValueError(f"{value!r} is not a cron expression of 5 fields (minute hour day month weekday)")
        return value

    @field_validator("freshness_as_of")
    @classmethod
    def _as_utc(cls, value: datetime | None) -> datetime | None:
        """The moment in UTC, without an offset (the warehouse's timestamps); no offset means UTC."""
        if value is None or value.tzinfo is None:
            return value
        return value.astimezone(UTC).replace(tzinfo=None)

    @field_validator("timezone")
    @classmethod
    def _known_timezone(cls, value: str) -> str:
        try:
            ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError):
            raise ValueError(f"{value!r} is not an IANA time zone (e.g. UTC, Europe/Berlin)") from None
        return value
