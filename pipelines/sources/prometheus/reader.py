"""A `prometheus` source's GPU utilization by GPU and hour, from NVIDIA DCGM exporter series.

Two range queries, each a plain series selector (so that saved responses answer them too):
`DCGM_FI_PROF_GR_ENGINE_ACTIVE` (the fraction of time the GPU's graphics engine was active, 0 to
1; data-center GPUs with profiling metrics enabled) and `DCGM_FI_DEV_GPU_UTIL` (percent of time a
kernel ran, 0 to 100). A GPU's hour takes the first where it has samples of it, the second else.

A series names its GPU by the exporter's `UUID` label (else `Hostname` and `gpu`), its host by
`Hostname`, the job holding the GPU by `namespace` and `pod` (Kubernetes) or `hpc_job` (Slurm with
HPC job mapping), and its cloud resource as `hosts:` says (settings.py).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path

from connectors.errors import SourceError
from connectors.prometheus import PrometheusClient, SavedPrometheus, Series
from connectors.prometheus.series import on_grid, shown
from pipelines.sources.intervals import ClusterNode
from pipelines.sources.node_map import read_node_map
from pipelines.sources.prometheus.settings import HostLabel, PrometheusSource
from pipelines.sources.telemetry import GpuHour, GpuSample, hourly

ENGINE_ACTIVE = "DCGM_FI_PROF_GR_ENGINE_ACTIVE"
GPU_UTIL = "DCGM_FI_DEV_GPU_UTIL"
# each metric and what its value is divided by to give a fraction
METRICS = ((ENGINE_ACTIVE, Decimal(1)), (GPU_UTIL, Decimal(100)))
HOSTNAME_LABEL = "Hostname"


def read_gpu_hours(source: PrometheusSource, resolve: Callable[[str], Path]) -> list[GpuHour]:
    """The source's GPU-hours over its range (settings.py).

    Raises:
        SourceError: the server or saved files cannot answer (naming the URL or file and the
            query), a value is outside its metric's range (naming the series, the sample's time
            and the metric), or the node map is bad (naming its file and line).
    """
    start, end, _ = source.window(datetime.now(UTC).replace(tzinfo=None))
    if isinstance(source.hosts, HostLabel):
        return gpu_hours(source.client(resolve), start, end, source.step, source.hosts.label)
    node_map = read_node_map(resolve(source.hosts.csv), source.name)
    return gpu_hours(source.client(resolve), start, end, source.step, None, node_map)


def gpu_hours(
    client: PrometheusClient,
    start: datetime,
    end: datetime,
    step_seconds: int,
    resource_label: str | None = "instance_id",
    node_map: Iterable[ClusterNode] = (),
) -> list[GpuHour]:
    """The GPU-hours the DCGM series of [start, end] give, evaluated on the grid of whole multiples
    of the step.

    Args:
        client: the Prometheus (a server or saved responses).
        start, end: the range, naive UTC.
        step_seconds: the sampling resolution.
        resource_label: the label holding a series' cloud resource id; None: none does.
        node_map: hosts and the resources they were over time (`hosts: {csv: …}`).
    """
    step = timedelta(seconds=step_seconds)
    first, last = on_grid(start, step, up=True), on_grid(end, step, up=False)
    if first > last:
        return []
    by_host: dict[str, list[ClusterNode]] = defaultdict(list)
    for node in node_map:
        by_host[node.node].append(node)
    chosen: list[GpuHour] = []
    covered: set[tuple[str, datetime]] = set()
    for metric, divisor in METRICS:
        if isinstance(client, SavedPrometheus) and not client.saved(metric):
            continue
        metric_hours = hourly(
            _sample(series, moment, value, metric, divisor, resource_label, by_host)
            for series in client.query_range(metric, first, last, step_seconds)
            for moment, value in series.samples
        )
        chosen += [gpu_hour for gpu_hour in metric_hours if (gpu_hour.gpu, gpu_hour.hour) not in covered]
        covered |= {(gpu_hour.gpu, gpu_hour.hour) for gpu_hour in metric_hours}
    return sorted(chosen, key=lambda gpu_hour: (gpu_hour.gpu, gpu_hour.hour, gpu_hour.job_id or ""))


def _sample(
    series: Series,
    moment: datetime,
    value: Decimal,
    metric: str,
    divisor: Decimal,
    resource_label: str | None,
    by_host: dict[str, list[ClusterNode]],
) -> GpuSample:
    labels = series.labels
    host = labels.get(HOSTNAME_LABEL) or None
    pod = labels.get("pod")
    if not value.is_finite() or not 0 <= value <= divisor:
        raise SourceError(
            f"series {shown(labels)}: the sample at {moment:%Y-%m-%dT%H:%M:%S}Z: {metric} is {value}, "
            f"outside 0 to {divisor}"
        )
    return GpuSample(
        series=shown(labels),
        gpu=labels.get("UUID") or f"{host or labels.get('instance', '')}/{labels.get('gpu', '')}",
        time=moment,
        utilization=value / divisor,
        host=host,
        resource_id=((labels.get(resource_label) or None) if resource_label else None)
        or _mapped(by_host, host, moment),
        job_id=f"{labels.get('namespace', '')}/{pod}" if pod else labels.get("hpc_job") or None,
    )


def _mapped(by_host: dict[str, list[ClusterNode]], host: str | None, moment: datetime) -> str | None:
    for node in by_host.get(host or "", ()):
        if (node.valid_from is None or node.valid_from <= moment) and (node.valid_to is None or moment < node.valid_to):
            return node.resource_id
    return None
