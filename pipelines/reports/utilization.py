"""GPU utilization and data wait in a run's report: the run's hours of `run_utilization` as a
chart, a short account and a table. Telemetry never changes a cost: this section explains, the
figures above it are the bill's."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal

from pipelines.reports.document import Block, Cell, Paragraph, Table, percent
from pipelines.reports.document import gpu_hours as hours

UTILIZATION_CHART = "gpu_utilization"
"""The name of the run report's utilization chart (utilization_chart.py)."""
UTILIZATION_NOTE = (
    "GPU utilization: the mean over the run's GPUs of the DCGM exporter's samples (or MLflow's system "
    "metrics) in each UTC hour. Data wait: the share of step time the run's event log says its steps "
    "spent waiting for data. Data-wait GPU-hours: GPUs × hours × that share; they are the input-bound "
    "part of the throughput cause and the data_loading_stall waste."
)


@dataclass(frozen=True)
class UtilizationHour:
    """An hour of the run's `run_utilization`."""

    hour: datetime
    gpus: int | None
    gpu_utilization: Decimal | None
    data_wait_share: Decimal | None
    samples: int
    data_wait_gpu_hours: Decimal | None


def utilization_blocks(hours_of_run: Sequence[UtilizationHour], chart: Block | None) -> tuple[Block, ...]:
    """The section's account of the run's telemetry, its chart and its hours; nothing without telemetry."""
    if not hours_of_run:
        return ()
    sampled = [hour for hour in hours_of_run if hour.gpu_utilization is not None]
    timed = [hour for hour in hours_of_run if hour.data_wait_share is not None]
    parts = []
    if sampled:
        samples = sum(hour.samples for hour in sampled)
        mean = sum((hour.gpu_utilization * hour.samples for hour in sampled), Decimal(0)) / samples
        lowest = min(sampled, key=lambda hour: hour.gpu_utilization)
        parts.append(
            f"{len(sampled)} hours with GPU samples: mean utilization {percent(mean)}, lowest "
            f"{percent(lowest.gpu_utilization)} at {lowest.hour:%Y-%m-%d %H:%M} UTC"
        )
    if timed:
        waiting = sum((hour.data_wait_gpu_hours or Decimal(0) for hour in timed), Decimal(0))
        busiest = max(timed, key=lambda hour: hour.data_wait_share)
        parts.append(
            f"{len(timed)} hours with step timings: {hours(waiting)} GPU-hours waiting for data, at most "
            f"{percent(busiest.data_wait_share)} of step time at {busiest.hour:%Y-%m-%d %H:%M} UTC"
        )
    table = Table(
        columns=("Hour (UTC)", "GPUs", "GPU utilization", "Data wait", "Data-wait GPU-h", "Samples"),
        rows=tuple(
            (
                Cell(f"{hour.hour:%Y-%m-%d %H:%M}"),
                Cell("" if hour.gpus is None else f"{hour.gpus:,}"),
                Cell(percent(hour.gpu_utilization)),
                Cell(percent(hour.data_wait_share)),
                Cell(hours(hour.data_wait_gpu_hours)),
                Cell(f"{hour.samples:,}"),
            )
            for hour in hours_of_run
        ),
        numeric_columns=frozenset(range(1, 6)),
    )
    return (Paragraph("; ".join(parts) + "."), *((chart,) if chart else ()), table, Paragraph(UTILIZATION_NOTE))
