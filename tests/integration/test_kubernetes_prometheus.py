"""A `kubernetes` source against a real Prometheus (Debian's 2.42) holding a small made-up cluster's
kube-state-metrics series (`tests/support/kube_cluster.py`), and the same source over the responses
saved from that server with curl (`tests/fixtures/kubernetes/`, README there)."""

from __future__ import annotations

import re
import shutil
from collections import Counter
from datetime import date, datetime, timedelta
from decimal import Decimal
from itertools import pairwise
from pathlib import Path

import pytest
import requests

from connectors.errors import SourceError
from connectors.prometheus import HttpPrometheus, SavedPrometheus
from connectors.prometheus.series import to_unix
from pipelines.attribution.allocate import allocate_period
from pipelines.attribution.settings import DEFAULT_DIMENSIONS
from pipelines.clusters.usage import replace_cluster_usage_if_changed
from pipelines.config import load_config
from pipelines.sources.intervals import ClusterIntervals
from pipelines.sources.kubernetes.reader import cluster_intervals
from pipelines.sources.registry import kind_of
from tests.support import FIXTURES, kube_cluster, write_config
from tests.support.lake import memory_warehouse
from tests.support.prometheus import PrometheusServers, free_port

SAVED = FIXTURES / "kubernetes"


@pytest.fixture(scope="module")
def cluster_url(prometheus_servers: PrometheusServers) -> str:
    return prometheus_servers.serve(kube_cluster.openmetrics())


@pytest.fixture(scope="module")
def from_server(cluster_url: str) -> ClusterIntervals:
    return cluster_intervals(HttpPrometheus(cluster_url), "gpu-prod", kube_cluster.START, kube_cluster.END, 60)


def gpu_seconds(read: ClusterIntervals) -> dict[str, Decimal]:
    held: Counter[str] = Counter()
    for interval in read.intervals:
        assert interval.end is not None
        held[interval.job_id] += interval.gpus * Decimal((interval.end - interval.start).total_seconds())
    return dict(held)


def at(clock: str) -> datetime:
    hours, minutes = (int(part) for part in clock.split(":"))
    return datetime(2026, 11, 2, hours, minutes)


def test_pods_on_the_real_server_become_their_intervals(from_server: ClusterIntervals) -> None:
    assert Counter(interval.job_id for interval in from_server.intervals) == {
        "train/llm-7b-worker-0": 1,
        "train/llm-7b-worker-1": 1,
        "train/data-prep-1": 1,  # only while Running: its Succeeded hour holds nothing
        "eval/eval-3": 2,  # recreated after a 30-minute gap
        "kube-system/kube-proxy-a": 1,
    }  # the never-scheduled llm-7b-worker-2 holds nothing
    assert gpu_seconds(from_server) == {
        "train/llm-7b-worker-0": 8 * 3 * 3600,  # 8 GPUs (counted once from two kube-state-metrics replicas)
        "train/llm-7b-worker-1": 8 * 3 * 3600,
        "train/data-prep-1": 0,
        "eval/eval-3": 4 * 3600 + 4 * 1800,
        "kube-system/kube-proxy-a": 0,
    }
    spans = {(i.job_id, i.start, i.end, i.cpus) for i in from_server.intervals}
    assert spans == {
        ("train/llm-7b-worker-0", at("08:11"), at("11:11"), Decimal("90.5")),
        ("train/llm-7b-worker-1", at("08:11"), at("11:11"), Decimal("90.5")),
        ("train/data-prep-1", at("08:01"), at("08:31"), Decimal(4)),
        ("eval/eval-3", at("11:31"), at("12:31"), Decimal(8)),
        ("eval/eval-3", at("13:01"), at("13:31"), Decimal(8)),
        ("kube-system/kube-proxy-a", at("08:01"), at("14:01"), Decimal("0.1")),
    }


def test_nodes_carry_their_cloud_resource_and_capacity(from_server: ClusterIntervals) -> None:
    nodes = {(n.node, n.resource_id, n.valid_from, n.valid_to, n.gpus, n.cpus) for n in from_server.nodes}
    assert nodes == {
        ("gpu-node-a", "i-0a1b2c3d4e5f60001", at("08:01"), at("14:01"), Decimal(8), Decimal(96)),
        ("gpu-node-b", "gke-train-pool-7f3a-x2k9", at("08:01"), at("12:01"), Decimal(8), Decimal(208)),
    }
    on_node = {(i.job_id, i.node, i.resource_id) for i in from_server.intervals}
    assert ("train/llm-7b-worker-0", "gpu-node-a", "i-0a1b2c3d4e5f60001") in on_node
    assert ("train/llm-7b-worker-1", "gpu-node-b", "gke-train-pool-7f3a-x2k9") in on_node
    assert {i.cluster for i in from_server.intervals} | {n.cluster for n in from_server.nodes} == {"gpu-prod"}


def test_pod_labels_lose_their_label_prefix(from_server: ClusterIntervals) -> None:
    labels = {i.job_id: dict(i.labels) for i in from_server.intervals}
    assert labels["train/llm-7b-worker-0"] == {
        "training_run": "llm-7b-pt-r1",
        "experiment": "pretrain-7b",
        "app_kubernetes_io_name": "llm-trainer",  # kube-state-metrics' sanitized app.kubernetes.io/name
    }
    assert labels["train/data-prep-1"] == {"training_run": "llm-7b-pt-r1"}  # the pod's label training-run
    assert labels["kube-system/kube-proxy-a"] == {}


def test_saved_responses_give_the_same_intervals(from_server: ClusterIntervals) -> None:
    saved = cluster_intervals(SavedPrometheus(SAVED), "gpu-prod", kube_cluster.START, kube_cluster.END, 60)
    assert saved == from_server


def test_the_source_kind_reads_a_configured_server_and_saved_folder(
    tmp_path: Path, cluster_url: str, from_server: ClusterIntervals
) -> None:
    shutil.copytree(SAVED, tmp_path / "k8s-saved")
    window = "start: 2026-11-02T08:00:00Z, end: 2026-11-02T14:00:00+00:00"
    config = load_config(
        write_config(
            tmp_path,
            "sources:\n"
            f"  - {{name: k8s, kind: kubernetes, cluster: gpu-prod, url: '{cluster_url}/', {window}}}\n"
            f"  - {{name: k8s-saved, kind: kubernetes, cluster: gpu-prod, path: k8s-saved, step: 60, {window}}}\n",
        )
    )
    for source in config.sources:
        read = kind_of(source).intervals(source, config.resolve)
        assert read == from_server, source.name


def test_a_long_range_is_asked_in_pieces_under_the_points_limit(cluster_url: str) -> None:
    query, start, end = 'kube_node_info{node="gpu-node-a"}', at("08:00"), at("11:20")  # 12,001 points at 1 s
    refused = requests.get(
        f"{cluster_url}/api/v1/query_range",
        params={"query": query, "start": to_unix(start), "end": to_unix(end), "step": 1},
        timeout=10,
    )
    assert refused.status_code == 400 and "11,000 points" in refused.json()["error"]
    (series,) = HttpPrometheus(cluster_url).query_range(query, start, end, 1)
    times = [moment for moment, _ in series.samples]
    # seen from its first sample at 08:00:30 at every second to 11:20:00, none twice or missing
    assert len(times) == 11_971
    assert times[0] == at("08:00") + timedelta(seconds=30) and times[-1] == end
    assert all(after - before == timedelta(seconds=1) for before, after in pairwise(times))


def test_an_unreachable_server_is_named() -> None:
    url = f"http://127.0.0.1:{free_port()}"
    query = re.escape("""query 'kube_pod_info{node!=""}'""")
    with pytest.raises(SourceError, match=rf"^Prometheus at {url} is unreachable for {query}: "):
        cluster_intervals(HttpPrometheus(url, timeout=5), "gpu-prod", kube_cluster.START, kube_cluster.END, 60)


def test_the_servers_error_is_shown_with_its_url_and_query(cluster_url: str) -> None:
    with pytest.raises(SourceError) as raised:
        HttpPrometheus(cluster_url).query_range("kube_pod_info{", at("08:00"), at("09:00"), 60)
    assert str(raised.value) == (
        f"Prometheus at {cluster_url} answered HTTP 400 for query 'kube_pod_info{{': "
        "bad_data: 1:15: parse error: unexpected end of input inside braces"
    )


def test_the_pods_split_their_nodes_bill_by_the_gpu_seconds_they_held(from_server: ClusterIntervals) -> None:
    """gpu-node-a billed 98.32 an hour 08:00-14:00 (48 GPU-hours): llm-7b-worker-0's 8 GPUs over
    [08:11, 11:11) are 24 GPU-hours, 294.96; eval-3's 4 GPUs over 90 minutes (no run named) 6
    GPU-hours, 73.74; the other 18 GPU-hours idle, 221.22."""
    conn = memory_warehouse()
    for hour in range(8, 14):
        conn.execute(
            "insert into focus_line_items (x_LineItemKey, x_SourceName, x_SourceFormat, BillingCurrency, "
            "BillingPeriodStart, ChargePeriodStart, ChargePeriodEnd, ResourceId, BilledCost, EffectiveCost, "
            "x_CostCategory, x_GpuCount, x_GpuHours, Tags) values ($key, 'aws-main', 'aws_cur2', 'USD', "
            "'2026-11-01', $start, $end, 'i-0a1b2c3d4e5f60001', 98.32, 98.32, 'compute', 8, 8, map())",
            {"key": f"a-{hour}", "start": at(f"{hour}:00"), "end": at(f"{hour + 1}:00")},
        )
    replace_cluster_usage_if_changed(conn, {"k8s": from_server}, DEFAULT_DIMENSIONS)
    allocate_period(conn, date(2026, 11, 1), DEFAULT_DIMENSIONS)

    parts = conn.execute(
        "select allocation_method, training_run, experiment, sum(effective_cost), sum(gpu_hours) "
        "from cost_allocations group by all order by all"
    ).fetchall()
    assert parts == [
        ("cluster", "llm-7b-pt-r1", "pretrain-7b", Decimal("294.96"), Decimal(24)),
        ("cluster", None, "pretrain-7b-eval", Decimal("73.74"), Decimal(6)),
        ("idle_capacity", None, None, Decimal("221.22"), Decimal(18)),
    ]
