"""A `kubernetes` source's usage intervals and nodes, from kube-state-metrics (v2) series.

Six range queries, each a plain series selector (so that saved responses answer them too):

- `kube_pod_info{node!=""}`: which node each pod (`namespace`, `pod`) is on, at each step;
- `kube_pod_status_phase{phase=~"Pending|Running"}`: whether it holds the node (value 1); a pod
  that succeeded or failed but is not deleted yet holds nothing;
- `kube_pod_container_resource_requests{resource=~"<gpu>|cpu"}`: its GPUs (unit `integer`) and
  CPUs (unit `core`), the sum over its containers;
- `kube_pod_labels`: its labels, `label_<name>` (kube-state-metrics' sanitized names) as `<name>`;
- `kube_node_info`: each node's `provider_id`, its cloud resource (`provider_ids.py`);
- `kube_node_status_capacity{resource=~"<gpu>|cpu"}`: each node's GPUs and CPUs.

A pod holding a node at consecutive evaluation times `step` apart, with the same requests, is one
interval [first time, last time + step); a longer gap, or another request, starts a new one. A pod
still on its node at the end of a range that ends at the run has no end yet. The job id is
`namespace/pod`; a pod without a GPU request holds 0 GPUs (and its CPUs).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path

from connectors.errors import SourceError
from connectors.prometheus import PrometheusClient, Series
from connectors.prometheus.series import on_grid, shown
from pipelines.sources.intervals import ClusterIntervals, ClusterNode, UsageInterval
from pipelines.sources.kubernetes.provider_ids import resource_id
from pipelines.sources.kubernetes.settings import KubernetesSource

CPU = "cpu"
UNITS = {CPU: "core"}
GPU_UNIT = "integer"
LABEL_PREFIX = "label_"

Pod = tuple[str, str]  # (namespace, pod)
Requests = tuple[Decimal, Decimal]  # (GPUs, CPUs)


def read_intervals(source: KubernetesSource, resolve: Callable[[str], Path]) -> ClusterIntervals:
    """The usage intervals of the source's pods and its nodes, over its range (settings.py).

    Raises:
        SourceError: the server or saved files cannot answer (the message names the URL or file
            and the query), or a series is not what kube-state-metrics writes (naming it).
    """
    client = source.client(resolve)
    start, end, open_ended = source.window(datetime.now(UTC).replace(tzinfo=None))
    return cluster_intervals(client, source.cluster, start, end, source.step, source.gpu_resource, open_ended)


def cluster_intervals(
    client: PrometheusClient,
    cluster: str,
    start: datetime,
    end: datetime,
    step_seconds: int,
    gpu_resource: str = "nvidia_com_gpu",
    open_ended: bool = False,
) -> ClusterIntervals:
    """The intervals and nodes the series of [start, end] give, evaluated on the grid of whole
    multiples of the step (Unix time).

    Args:
        client: the Prometheus (a server or saved responses).
        cluster: the source's `cluster:` name.
        start, end: the range, naive UTC.
        step_seconds: the sampling resolution.
        gpu_resource: the GPU resource as kube-state-metrics names it.
        open_ended: the range ends now: a pod or node seen at its last evaluation time has no end.
    """
    step = timedelta(seconds=step_seconds)
    first, last = on_grid(start, step, up=True), on_grid(end, step, up=False)
    if first > last:
        return ClusterIntervals(intervals=[], nodes=[])
    resources = f"{gpu_resource}|{CPU}"

    def query(selector: str) -> list[Series]:
        return client.query_range(selector, first, last, step_seconds)

    info, phases = query('kube_pod_info{node!=""}'), query('kube_pod_status_phase{phase=~"Pending|Running"}')
    if info and not phases:
        raise SourceError(
            f"{client.location}: kube_pod_info has series but kube_pod_status_phase none: without the pods' phases "
            "no pod can be said to hold its node (is kube_pod_status_phase in kube-state-metrics' --metric-denylist?)"
        )
    placed = _pods_on_nodes(info, phases)
    requests = _pod_requests(
        query(f'kube_pod_container_resource_requests{{resource=~"{resources}"}}'), gpu_resource, client.location
    )
    labels = _pod_labels(query("kube_pod_labels"))
    nodes = _nodes(
        cluster,
        query("kube_node_info"),
        query(f'kube_node_status_capacity{{resource=~"{resources}"}}'),
        gpu_resource,
        step,
        last if open_ended else None,
    )
    intervals = [
        UsageInterval(
            cluster=cluster,
            node=node,
            job_id=f"{pod[0]}/{pod[1]}",
            start=run_start,
            end=None if open_ended and run_last == last else run_last + step,
            gpus=held[0],
            cpus=held[1],
            labels=labels.get(pod, {}),
            resource_id=_resource_at(nodes, node, run_start),
        )
        for (pod, node), times in sorted(placed.items())
        for run_start, run_last, held in _runs(times, requests.get(pod, {}), step)
    ]
    return ClusterIntervals(intervals=intervals, nodes=nodes)


def _pod(series: Series) -> Pod:
    return series.labels.get("namespace", ""), series.labels.get("pod", "")


def _pods_on_nodes(info: list[Series], phases: list[Series]) -> dict[tuple[Pod, str], set[datetime]]:
    active: dict[Pod, set[datetime]] = defaultdict(set)
    for series in phases:
        active[_pod(series)].update(moment for moment, value in series.samples if value == 1)
    placed: dict[tuple[Pod, str], set[datetime]] = defaultdict(set)
    for series in info:
        pod, node = _pod(series), series.labels.get("node", "")
        placed[(pod, node)].update(moment for moment, _ in series.samples if moment in active[pod])
    return {key: times for key, times in placed.items() if times}


def _pod_requests(series_list: list[Series], gpu_resource: str, location: str) -> dict[Pod, dict[datetime, Requests]]:
    # the same container's request from two kube-state-metrics replicas (or scrape jobs) is counted once
    by_container: dict[tuple[Pod, str, str], dict[datetime, Decimal]] = defaultdict(dict)
    for series in series_list:
        resource, unit = series.labels.get("resource"), series.labels.get("unit")
        expected = GPU_UNIT if resource == gpu_resource else UNITS.get(resource or "")
        if unit != expected:
            raise SourceError(
                f"{location}: {shown(series.labels)}: {resource} requested in unit {unit!r}, expected {expected!r} "
                "(kube-state-metrics v2)"
            )
        values = by_container[(_pod(series), series.labels.get("container", ""), resource or "")]
        for moment, value in series.samples:
            values[moment] = max(value, values.get(moment, value))
    requests: dict[Pod, dict[datetime, Requests]] = defaultdict(dict)
    for (pod, _, resource), values in by_container.items():
        held = requests[pod]
        for moment, value in values.items():
            gpus, cpus = held.get(moment, (Decimal(0), Decimal(0)))
            held[moment] = (gpus + value, cpus) if resource == gpu_resource else (gpus, cpus + value)
    return requests


def _pod_labels(series_list: list[Series]) -> dict[Pod, dict[str, str]]:
    newest: dict[Pod, tuple[datetime, dict[str, str]]] = {}
    for series in series_list:
        if not series.samples:
            continue
        pod, seen = _pod(series), series.samples[-1][0]
        if pod not in newest or seen > newest[pod][0]:
            labels = {
                key.removeprefix(LABEL_PREFIX): value
                for key, value in series.labels.items()
                if key.startswith(LABEL_PREFIX)
            }
            newest[pod] = (seen, labels)
    return {pod: labels for pod, (_, labels) in newest.items()}


def _runs(
    times: set[datetime], requests: dict[datetime, Requests], step: timedelta
) -> list[tuple[datetime, datetime, Requests]]:
    """(first time, last time, requests) of each run of times `step` apart with the same requests."""
    runs: list[tuple[datetime, datetime, Requests]] = []
    for moment in sorted(times):
        held = requests.get(moment, (Decimal(0), Decimal(0)))
        if runs and moment - runs[-1][1] == step and runs[-1][2] == held:
            runs[-1] = (runs[-1][0], moment, held)
        else:
            runs.append((moment, moment, held))
    return runs


def _nodes(
    cluster: str,
    info: list[Series],
    capacity: list[Series],
    gpu_resource: str,
    step: timedelta,
    still_seen_at: datetime | None,
) -> list[ClusterNode]:
    capacities: dict[tuple[str, str], dict[datetime, Decimal]] = defaultdict(dict)
    for series in capacity:
        capacities[(series.labels.get("node", ""), series.labels.get("resource", ""))].update(series.samples)
    seen: dict[tuple[str, str], set[datetime]] = defaultdict(set)
    for series in info:
        resource = resource_id(series.labels.get("provider_id", ""))
        if resource is not None:
            seen[(series.labels.get("node", ""), resource)].update(moment for moment, _ in series.samples)
    nodes = []
    for (node, resource), times in sorted(seen.items()):
        valid_from, last = min(times), max(times)
        has_capacity = any(name == node for name, _ in capacities)
        nodes.append(
            ClusterNode(
                cluster=cluster,
                node=node,
                resource_id=resource,
                valid_from=valid_from,
                valid_to=None if last == still_seen_at else last + step,
                gpus=_capacity(capacities, node, gpu_resource, times) if has_capacity else None,
                cpus=_capacity(capacities, node, CPU, times) if has_capacity else None,
            )
        )
    return nodes


def _capacity(
    capacities: dict[tuple[str, str], dict[datetime, Decimal]], node: str, resource: str, times: set[datetime]
) -> Decimal:
    """The node's newest capacity of the resource while it was this cloud resource; 0 when it
    reports none (a node without GPUs)."""
    values = capacities.get((node, resource), {})
    during = [moment for moment in values if moment in times]
    return values[max(during)] if during else Decimal(0)


def _resource_at(nodes: list[ClusterNode], node: str, moment: datetime) -> str | None:
    for entry in nodes:
        if (
            entry.node == node
            and (entry.valid_from is None or entry.valid_from <= moment)
            and (entry.valid_to is None or moment < entry.valid_to)
        ):
            return entry.resource_id
    return None
