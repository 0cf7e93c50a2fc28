"""What a scheduler source (`slurm`, `kubernetes`) reads: usage intervals and the nodes they ran on.

A usage interval is one job (a Slurm allocation, a Kubernetes pod) holding GPUs (or CPUs) of one
node over [start, end). The `cluster_usage` asset stores every scheduler source's intervals and
nodes; attribution splits a node's bill lines among the intervals overlapping them by
GPU-seconds, and what no interval held is the cluster's idle capacity.

Times are naive UTC datetimes. GPUs and CPUs are Decimals: a job's GPUs divided evenly over its
nodes may be fractional.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal


@dataclass(frozen=True)
class UsageInterval:
    """One job on one node over [start, end).

    Attributes:
        cluster: the source's `cluster:` name.
        node: the host name as the scheduler names it.
        job_id: the scheduler's job id (Slurm: `12345`, a requeued run of it stays `12345`;
            Kubernetes: `namespace/pod`).
        start: when the job got the node.
        end: when it released it; None while it still runs (attribution ends it at the newest
            billed hour of the node).
        gpus: GPUs it held on this node (0 on GPU-less nodes).
        cpus: CPUs it held on this node, where known.
        labels: what the job says of itself as key → value (a Slurm comment's `key=value`
            pairs, or `training_run` → its job name under `run_from: job_name`; a pod's labels).
            The `cluster_usage` asset matches the keys to `attribution.dimensions` as it matches
            tags (case-insensitive, `-`, ` ` and `:` as `_`): a job naming no run has none.
        resource_id: the node's cloud resource id where the scheduler itself says it (a
            Kubernetes node's provider id); else the node map resolves `node`.
    """

    cluster: str
    node: str
    job_id: str
    start: datetime
    end: datetime | None
    gpus: Decimal
    cpus: Decimal | None = None
    labels: Mapping[str, str] = field(default_factory=dict)
    resource_id: str | None = None


@dataclass(frozen=True)
class ClusterNode:
    """A node of a cluster and its cloud resource over [valid_from, valid_to) (both optional).

    Attributes:
        gpus, cpus: the node's capacity where the source knows it; else attribution takes the GPUs
            of the node's instance type from its bill lines.
    """

    cluster: str
    node: str
    resource_id: str
    valid_from: datetime | None = None
    valid_to: datetime | None = None
    gpus: Decimal | None = None
    cpus: Decimal | None = None


@dataclass(frozen=True)
class ClusterIntervals:
    """Everything one scheduler source read.

    Attributes:
        intervals: the jobs' intervals, one per (job run, node).
        nodes: the node map's entries (a CSV, or the nodes a Kubernetes source saw).
        node_tag: the resource tag whose value names a node's host (`nodes: {tag: KEY}`); the
            tag snapshots resolve hosts to resources. None when the nodes are listed.
    """

    intervals: list[UsageInterval]
    nodes: list[ClusterNode]
    node_tag: str | None = None
