"""A small made-up GPU cluster as kube-state-metrics (v2) reports it, in the OpenMetrics text format
that `tests/support/prometheus.py` serves: two GPU nodes (one on AWS, one on GKE) and a few pods
over six hours of 2026-11-02, one sample a minute at :30 of each minute (a scrape's offset from
the queries' whole minutes), two kube-state-metrics replicas reporting the trainer's requests.

What the pods did (UTC), and so what a `kubernetes` source reads at a 60 s step from 08:00 to
14:00 (a pod sampled from hh:mm:30 to HH:MM:30 holds [hh:mm+1, HH:MM+2)):

- train/llm-7b-worker-0 on gpu-node-a, Running 08:10:30 to 11:09:30, 8 GPUs and 90.5 CPUs (two
  containers; both kube-state-metrics replicas report them): [08:11, 11:11);
- train/llm-7b-worker-1 on gpu-node-b, the same: [08:11, 11:11);
- train/data-prep-1 on gpu-node-b, Running 08:00:30 to 08:29:30, then Succeeded (not deleted) until
  09:29:30, 0 GPUs and 4 CPUs: [08:01, 08:31);
- eval/eval-3 on gpu-node-a, Running 11:30:30 to 12:29:30 and, recreated, 13:00:30 to 13:29:30,
  4 GPUs and 8 CPUs: [11:31, 12:31) and [13:01, 13:31);
- kube-system/kube-proxy-a on gpu-node-a, Running the whole time, 0.1 CPU: [08:01, 14:01);
- train/llm-7b-worker-2, Pending and never scheduled (no node) 08:00:30 to 08:59:30: nothing.

gpu-node-a (`aws:///us-east-1a/i-0a1b2c3d4e5f60001`, 8 GPUs, 96 CPUs) is there the whole time;
gpu-node-b (`gce://ml-train-prod/us-central1-a/gke-train-pool-7f3a-x2k9`, 8 GPUs, 208 CPUs) from
08:00:30 to 11:59:30.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

DAY = datetime(2026, 11, 2, tzinfo=UTC)
START = datetime(2026, 11, 2, 8, 0)
END = datetime(2026, 11, 2, 14, 0)
INSTANCES = ('instance="ksm-0:8080",job="kube-state-metrics"', 'instance="ksm-1:8080",job="kube-state-metrics"')
NODES = {
    "gpu-node-a": ("aws:///us-east-1a/i-0a1b2c3d4e5f60001", "8", "96", ("08:00:30", "13:59:30")),
    "gpu-node-b": ("gce://ml-train-prod/us-central1-a/gke-train-pool-7f3a-x2k9", "8", "208", ("08:00:30", "11:59:30")),
}
RUN_LABELS = {"training_run": "llm-7b-pt-r1", "experiment": "pretrain-7b"}


@dataclass(frozen=True)
class Pod:
    namespace: str
    name: str
    node: str
    containers: dict[str, dict[str, str]]  # container → resource → request
    phases: list[tuple[str, str, str]]  # (phase, first sample, last sample), HH:MM:SS
    labels: dict[str, str] = field(default_factory=dict)
    uid: str = ""


PODS = [
    Pod(
        "train",
        "llm-7b-worker-0",
        "gpu-node-a",
        {"trainer": {"nvidia_com_gpu": "8", "cpu": "90"}, "log-shipper": {"cpu": "0.5"}},
        [("Running", "08:10:30", "11:09:30")],
        {**RUN_LABELS, "app.kubernetes.io/name": "llm-trainer"},
    ),
    Pod(
        "train",
        "llm-7b-worker-1",
        "gpu-node-b",
        {"trainer": {"nvidia_com_gpu": "8", "cpu": "90"}, "log-shipper": {"cpu": "0.5"}},
        [("Running", "08:10:30", "11:09:30")],
        {**RUN_LABELS, "app.kubernetes.io/name": "llm-trainer"},
    ),
    Pod(
        "train",
        "data-prep-1",
        "gpu-node-b",
        {"prep": {"cpu": "4"}},
        [("Running", "08:00:30", "08:29:30"), ("Succeeded", "08:30:30", "09:29:30")],
        {"training-run": "llm-7b-pt-r1"},
    ),
    Pod(
        "eval",
        "eval-3",
        "gpu-node-a",
        {"eval": {"nvidia_com_gpu": "4", "cpu": "8"}},
        [("Running", "11:30:30", "12:29:30"), ("Running", "13:00:30", "13:29:30")],
        {"experiment": "pretrain-7b-eval"},
    ),
    Pod(
        "kube-system",
        "kube-proxy-a",
        "gpu-node-a",
        {"kube-proxy": {"cpu": "0.1"}},
        [("Running", "08:00:30", "13:59:30")],
    ),
    Pod(
        "train",
        "llm-7b-worker-2",
        "",
        {"trainer": {"nvidia_com_gpu": "8", "cpu": "90"}, "log-shipper": {"cpu": "0.5"}},
        [("Pending", "08:00:30", "08:59:30")],
        RUN_LABELS,
    ),
]
PHASES = ("Pending", "Running", "Succeeded", "Failed", "Unknown")


def _minutes(first: str, last: str) -> list[int]:
    """The Unix times a minute apart from `first` to `last` (HH:MM:SS of the day)."""

    def at(clock: str) -> datetime:
        hours, minutes, seconds = (int(part) for part in clock.split(":"))
        return DAY + timedelta(hours=hours, minutes=minutes, seconds=seconds)

    moment, end, times = at(first), at(last), []
    while moment <= end:
        times.append(int(moment.timestamp()))
        moment += timedelta(minutes=1)
    return times


def _sanitized(name: str) -> str:
    return "".join(char if char.isalnum() or char == "_" else "_" for char in name)


def openmetrics() -> str:
    """The cluster's series as OpenMetrics text, one metric family after another, `# EOF` last."""
    families: dict[str, list[str]] = {
        name: []
        for name in (
            "kube_node_info",
            "kube_node_status_capacity",
            "kube_pod_info",
            "kube_pod_status_phase",
            "kube_pod_container_resource_requests",
            "kube_pod_labels",
        )
    }
    instance = INSTANCES[0]
    for node, (provider_id, gpus, cpus, (first, last)) in NODES.items():
        for moment in _minutes(first, last):
            families["kube_node_info"].append(
                f'kube_node_info{{{instance},node="{node}",provider_id="{provider_id}",'
                f'kubelet_version="v1.30.4",internal_ip="10.0.0.{len(node)}"}} 1 {moment}'
            )
            for resource, unit, value in (("nvidia_com_gpu", "integer", gpus), ("cpu", "core", cpus)):
                families["kube_node_status_capacity"].append(
                    f'kube_node_status_capacity{{{instance},node="{node}",resource="{resource}",unit="{unit}"}} '
                    f"{value} {moment}"
                )
    for number, pod in enumerate(PODS):
        ids = f'namespace="{pod.namespace}",pod="{pod.name}",uid="00000000-0000-0000-0000-00000000000{number}"'
        for phase, first, last in pod.phases:
            for moment in _minutes(first, last):
                families["kube_pod_info"].append(
                    f'kube_pod_info{{{instance},{ids},node="{pod.node}",created_by_kind="Job",'
                    f'host_ip="10.0.1.{number}"}} 1 {moment}'
                )
                for each in PHASES:
                    families["kube_pod_status_phase"].append(
                        f'kube_pod_status_phase{{{instance},{ids},phase="{each}"}} {int(each == phase)} {moment}'
                    )
                replicas = INSTANCES if pod.name == "llm-7b-worker-0" else INSTANCES[:1]
                for container, requests in pod.containers.items():
                    for resource, value in requests.items():
                        unit = "core" if resource == "cpu" else "integer"
                        for replica in replicas:
                            families["kube_pod_container_resource_requests"].append(
                                f'kube_pod_container_resource_requests{{{replica},{ids},container="{container}",'
                                f'node="{pod.node}",resource="{resource}",unit="{unit}"}} {value} {moment}'
                            )
                labels = "".join(f',label_{_sanitized(key)}="{value}"' for key, value in sorted(pod.labels.items()))
                families["kube_pod_labels"].append(f"kube_pod_labels{{{instance},{ids}{labels}}} 1 {moment}")
    lines = []
    for name, samples in families.items():
        lines.append(f"# TYPE {name} gauge")
        lines.extend(samples)
    return "\n".join([*lines, "# EOF", ""])
