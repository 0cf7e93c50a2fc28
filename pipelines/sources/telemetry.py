"""What a telemetry source reads: each GPU's utilization samples summed by UTC hour.

A `prometheus` source reads NVIDIA DCGM exporter series (one per GPU); a `run_events` source on
MLflow reads its runs' system metrics. The `gpu_utilization` asset stores them; `run_utilization`
joins each GPU-hour to the training run that held the GPU (the GPU's resource and hour as
attribution attributed them, or the run an MLflow run names).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal


@dataclass(frozen=True)
class GpuHour:
    """One GPU's utilization samples within one UTC hour.

    Attributes:
        series: where the samples come from, for messages: the series as PromQL writes it, or the
            MLflow run and metric.
        gpu: the GPU: its UUID, else its host and index (Prometheus), or `<MLflow run>/<index>`.
        hour: the start of the UTC hour.
        samples: the number of samples in the hour.
        utilization_sum: their sum, each a fraction of the time the GPU was busy (0 to 1).
        host: the host name the series names (its `Hostname` label), where it names one.
        resource_id: the cloud resource the GPU belongs to, where the series says it or a node map
            resolves its host.
        job_id: the scheduler's job the exporter says holds the GPU (`namespace/pod` on
            Kubernetes, the Slurm job id with HPC job mapping), where it says so.
        training_run: the run, where the source names it itself (MLflow).
    """

    series: str
    gpu: str
    hour: datetime
    samples: int
    utilization_sum: Decimal
    host: str | None = None
    resource_id: str | None = None
    job_id: str | None = None
    training_run: str | None = None


@dataclass(frozen=True)
class GpuSample:
    """One utilization sample of one GPU; the fields as `GpuHour`'s, `utilization` 0 to 1."""

    series: str
    gpu: str
    time: datetime
    utilization: Decimal
    host: str | None = None
    resource_id: str | None = None
    job_id: str | None = None
    training_run: str | None = None


def hourly(samples: Iterable[GpuSample]) -> list[GpuHour]:
    """The samples summed by GPU and UTC hour (and by resource, job and run, where a GPU changes
    them within an hour), in order of GPU and hour."""
    hours: dict[tuple, GpuHour] = {}
    for sample in samples:
        hour = sample.time.replace(minute=0, second=0, microsecond=0)
        key = (sample.gpu, hour, sample.host, sample.resource_id, sample.job_id, sample.training_run)
        found = hours.get(key)
        hours[key] = GpuHour(
            series=found.series if found else sample.series,
            gpu=sample.gpu,
            hour=hour,
            samples=(found.samples if found else 0) + 1,
            utilization_sum=(found.utilization_sum if found else Decimal(0)) + sample.utilization,
            host=sample.host,
            resource_id=sample.resource_id,
            job_id=sample.job_id,
            training_run=sample.training_run,
        )
    return sorted(hours.values(), key=lambda gpu_hour: (gpu_hour.gpu, gpu_hour.hour, gpu_hour.job_id or ""))
