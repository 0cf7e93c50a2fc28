"""The schedules: every night the current and the previous billing period; every week the lake's upkeep."""

from __future__ import annotations

from datetime import UTC, date, datetime

import dagster as dg

from pipelines.orchestration.partitions import partition_key
from pipelines.orchestration.settings import Orchestration

NIGHTLY_SCHEDULE = "nightly_refresh"
MAINTENANCE_SCHEDULE = "weekly_lake_maintenance"


def periods_to_refresh(tick: datetime) -> list[date]:
    """The billing period of the tick's UTC date and the one before it, oldest first.

    AWS keeps restating the previous month for weeks after it closed, so both are reloaded
    every night; older months are reloaded by the delivery sensor when a new delivery arrives.
    """
    today = tick.astimezone(UTC).date() if tick.tzinfo else tick.date()
    current = today.replace(day=1)
    previous = date(current.year - 1, 12, 1) if current.month == 1 else current.replace(month=current.month - 1)
    return [previous, current]


def build_nightly_schedule(job: dg.UnresolvedAssetJobDefinition, orchestration: Orchestration) -> dg.ScheduleDefinition:
    """The nightly schedule on `orchestration.cron` in `orchestration.timezone`."""

    @dg.schedule(
        name=NIGHTLY_SCHEDULE,
        job=job,
        cron_schedule=orchestration.cron,
        execution_timezone=orchestration.timezone,
        description="Every night, one run per billing period for the current and the previous month: raw loads of "
        "every source, focus_line_items, cost_allocations and everything downstream.",
    )
    def nightly_refresh(context: dg.ScheduleEvaluationContext) -> list[dg.RunRequest]:
        tick = context.scheduled_execution_time
        return [
            dg.RunRequest(run_key=f"{tick:%Y-%m-%d}:{partition_key(period)}", partition_key=partition_key(period))
            for period in periods_to_refresh(tick)
        ]

    return nightly_refresh


def build_maintenance_schedule(
    job: dg.UnresolvedAssetJobDefinition, orchestration: Orchestration
) -> dg.ScheduleDefinition:
    """The lake's upkeep on `orchestration.maintenance_cron` (weekly by default)."""
    return dg.ScheduleDefinition(
        name=MAINTENANCE_SCHEDULE,
        job=job,
        cron_schedule=orchestration.maintenance_cron,
        execution_timezone=orchestration.timezone,
        description="Every week: lake snapshots past `orchestration.snapshot_retention_days` expired, small files "
        "merged, files no kept snapshot reads deleted.",
    )
