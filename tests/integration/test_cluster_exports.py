"""Shared clusters in the bill, on the ingest side: AWS split cost allocation data (EKS pods on a
p5.48xlarge, tests/fixtures/eks_split/) as CUR 2.0, legacy CUR CSV and legacy CUR Parquet, and a
GKE cluster with cost allocation on (tests/fixtures/gke_allocation/), loaded into one lake by one
night. Every figure is the hand computation of the fixtures' README.md."""

from __future__ import annotations

import csv
import shutil
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path

import polars as pl
import pytest

from connectors.errors import SourceError
from pipelines.nightly import run_nightly
from pipelines.sources.registry import column_drift
from tests.support import FIXTURES, write_config
from tests.support.cur_exports import ingest
from tests.support.lake import reading

EKS = FIXTURES / "eks_split"
GKE = FIXTURES / "gke_allocation"
EKS_SOURCES = {"eks-cur2": "aws_cur2", "eks-legacy": "aws_legacy_csv", "eks-athena": "aws_legacy_parquet"}
NODE = "i-0e5f1a2b3c4d5e6f7"
HOURS = [datetime(2026, 11, 3, hour) for hour in range(3)]
LEGACY_CSV = Path("legacy/eks-split/20261101-20261201/eks-split-00001.csv")
CONFIG = """sources:
  - {name: eks-cur2, kind: aws_cur, uri: eks/cur2/eks-split}
  - {name: eks-legacy, kind: aws_cur, uri: eks/legacy/eks-split}
  - {name: eks-athena, kind: aws_cur, uri: eks/athena/eks-split}
  - {name: gke, kind: gcp_billing, path: gke}
"""


def D(text: str) -> Decimal:  # noqa: N802 - reads like a literal
    return Decimal(text).quantize(Decimal("1e-10"))


# README.md, "Hand computation": per pod and resource, its split cost each hour it ran
SPLIT = {
    "llm-7b-sft-worker-0": {"GPU": "12.40", "vCPU": "0.96", "GB": "0.40"},
    "llm-7b-sft-worker-1": {"GPU": "12.40", "vCPU": "0.96", "GB": "0.40"},
    "llm-1b-eval-0": {"GPU": "18.60", "vCPU": "1.44", "GB": "0.60"},
    "jupyter-7d9f8-x2k4q": {"GPU": "6.20", "vCPU": "0.48", "GB": "0.20"},
}
RAN = [tuple(SPLIT), tuple(SPLIT), ("llm-7b-sft-worker-0", "llm-7b-sft-worker-1")]


def expected_pod_rows() -> list[tuple]:
    """(hour, pod, resource, parent, split cost, unused cost) of every pod row: hours 0 and 1 use
    the whole node (no unused cost); in hour 2 the two workers hold half of it and each is given
    half of the unused half: an unused cost equal to its split cost."""
    rows = []
    for hour, pods in zip(HOURS, RAN):
        for pod in pods:
            for resource, split in SPLIT[pod].items():
                unused = split if hour.hour == 2 else "0"
                rows.append((hour, pod, resource, NODE, D(split), D(unused)))
    return sorted(rows)


@pytest.fixture(scope="module")
def night(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    """The four sources loaded by one night: the project folder and the night's output lines."""
    root = tmp_path_factory.mktemp("clusters")
    shutil.copytree(EKS, root / "eks", ignore=shutil.ignore_patterns("*.py", "*.md"))
    shutil.copytree(GKE, root / "gke", ignore=shutil.ignore_patterns("*.py", "*.md"))
    output: list[str] = []
    run_nightly(write_config(root, CONFIG), echo=output.append)
    return root, output


@pytest.mark.parametrize("source", EKS_SOURCES)
def test_each_pod_row_carries_its_parent_split_cost_and_unused_cost(night: tuple[Path, list[str]], source: str) -> None:
    with reading(night[0]) as conn:
        pods = conn.execute(
            "select ChargePeriodStart, split_part(ResourceId, '/', 4), "
            "regexp_extract(x_ProviderPricingUnit, '(.*)-Hours', 1), x_SplitParentResourceId, x_SplitCost, "
            "x_SplitUnusedCost from focus_line_items where x_SourceName = $source and x_SplitCost is not null "
            "order by all",
            {"source": source},
        ).fetchall()
        pod_costs = conn.execute(
            "select count(*), sum(BilledCost), sum(EffectiveCost), sum(x_GpuHours) from focus_line_items "
            "where x_SourceName = $source and ResourceId like 'arn:aws:eks:%:pod/%'",
            {"source": source},
        ).fetchone()
        others = conn.execute(
            "select ResourceId, count(*), sum(BilledCost), sum(x_GpuHours), count(x_SplitParentResourceId), "
            "count(x_SplitCost), count(x_SplitUnusedCost) from focus_line_items "
            "where x_SourceName = $source and x_SplitCost is null group by all",
            {"source": source},
        ).fetchall()
    assert pods == expected_pod_rows()
    # the pod rows cost nothing themselves: the node's lines carry the cost and the GPU-hours
    assert pod_costs == (30, D("0"), D("0"), D("0"))
    assert others == [(NODE, 3, D("165.12"), D("24"), 0, 0, 0)]


@pytest.mark.parametrize("source", EKS_SOURCES)
def test_split_and_unused_cost_sum_to_the_parents_cost_each_hour(night: tuple[Path, list[str]], source: str) -> None:
    with reading(night[0]) as conn:
        hours = conn.execute(
            "with pods as (select x_SplitParentResourceId as node, ChargePeriodStart as hour, "
            "sum(x_SplitCost) as split, sum(x_SplitUnusedCost) as unused from focus_line_items "
            "where x_SourceName = $source and x_SplitParentResourceId is not null group by all) "
            "select hour, parent.EffectiveCost, parent.BilledCost, split, unused, split + unused from pods "
            "inner join focus_line_items as parent on parent.x_SourceName = $source and parent.ResourceId = pods.node "
            "and parent.ChargePeriodStart = pods.hour order by hour",
            {"source": source},
        ).fetchall()
    cost = D("55.04")
    assert hours == [
        (HOURS[0], cost, cost, D("55.04"), D("0"), cost),
        (HOURS[1], cost, cost, D("55.04"), D("0"), cost),
        (HOURS[2], cost, cost, D("27.52"), D("27.52"), cost),
    ]


def test_every_source_reconciles_to_zero(night: tuple[Path, list[str]]) -> None:
    with reading(night[0]) as conn:
        rows = conn.execute(
            "select source_name, raw_rows, focus_rows, raw_billed_cost, rows_raw_focus_diff, "
            "rows_focus_allocated_diff, billed_raw_focus_diff, billed_focus_allocated_diff, "
            "effective_focus_allocated_diff from reconciliation order by source_name"
        ).fetchall()
    zero = D("0")
    assert rows == [
        ("eks-athena", 33, 33, D("165.12"), 0, 0, zero, zero, zero),
        ("eks-cur2", 33, 33, D("165.12"), 0, 0, zero, zero, zero),
        ("eks-legacy", 33, 33, D("165.12"), 0, 0, zero, zero, zero),
        ("gke", 30, 30, D("276.384"), 0, 0, zero, zero, zero),
    ]


@pytest.mark.parametrize("source", EKS_SOURCES)
def test_the_nodes_lines_are_split_among_its_pods_by_split_cost_and_the_unused_cost_is_idle(
    night: tuple[Path, list[str]], source: str
) -> None:
    # README.md: llm-7b-sft-r1 82.56 (12 GPU-h), llm-1b-eval-r2 41.28 (6), the unlabelled
    # notebook pod 13.76 (2), idle 27.52 (4): the three node lines' 165.12 and 24 GPU-hours; the pod
    # rows themselves go to their runs by tag at 0
    with reading(night[0]) as conn:
        rows = conn.execute(
            "select coalesce(training_run, '-'), allocation_method, coalesce(allocation_rule, '-'), cluster, "
            "count(distinct job_id), sum(effective_cost), sum(billed_cost), sum(gpu_hours) "
            "from cost_allocations where x_SourceName = $source and ResourceId = $node group by all order by all",
            {"source": source, "node": NODE},
        ).fetchall()
        pod_rows = conn.execute(
            "select coalesce(training_run, '-'), allocation_method, count(*), sum(effective_cost) "
            "from cost_allocations where x_SourceName = $source and ResourceId <> $node group by all order by all",
            {"source": source, "node": NODE},
        ).fetchall()
    assert rows == [
        ("-", "cluster", "cluster gpu-train", "gpu-train", 1, D("13.76"), D("13.76"), D("2")),
        ("-", "idle_capacity", "unallocated", "gpu-train", 0, D("27.52"), D("27.52"), D("4")),
        ("llm-1b-eval-r2", "cluster", "cluster gpu-train", "gpu-train", 1, D("41.28"), D("41.28"), D("6")),
        ("llm-7b-sft-r1", "cluster", "cluster gpu-train", "gpu-train", 2, D("82.56"), D("82.56"), D("12")),
    ]
    assert pod_rows == [
        ("-", "unattributed", 6, D("0")),
        ("llm-1b-eval-r2", "tag", 6, D("0")),
        ("llm-7b-sft-r1", "tag", 18, D("0")),
    ]


def delivered_columns(source: str) -> list[str]:
    if source == "eks-legacy":
        with (EKS / LEGACY_CSV).open(newline="") as handle:
            return next(csv.reader(handle))
    folder = EKS / ("cur2" if source == "eks-cur2" else "athena")
    (data,) = folder.rglob("eks-split-*.parquet")
    return list(pl.read_parquet_schema(data))


@pytest.mark.parametrize("source", EKS_SOURCES)
def test_the_split_columns_are_no_drift(night: tuple[Path, list[str]], source: str) -> None:
    columns = delivered_columns(source)
    assert sum("split" in column.lower() for column in columns) == 9
    drift = column_drift(EKS_SOURCES[source], columns)
    assert (drift.missing, drift.new) == ((), ())
    assert not [line for line in night[1] if "schema_drift" in line]


def test_gke_pod_labels_keep_their_keys_in_tags(night: tuple[Path, list[str]]) -> None:
    with reading(night[0]) as conn:
        tags = conn.execute(
            "select Tags from focus_line_items where x_SourceName = 'gke' and ChargePeriodStart = $hour "
            "and SkuId = 'E4B1-7C2D-9A3F' and Tags['k8s-namespace'] = 'training'",
            {"hour": HOURS[0]},
        ).fetchall()
    assert tags == [
        (
            {
                "goog-k8s-cluster-name": "gpu-train-gke",
                "goog-k8s-cluster-location": "us-central1-a",
                "k8s-namespace": "training",
                "k8s-workload-type": "batch/v1-Job",
                "k8s-workload-name": "llm-3b-pt",
                "k8s-label/app": "llm-3b-pt",
                "k8s-label/training_run": "llm-3b-pt-gke",
            },
        )
    ]


def test_gke_rows_labelled_with_a_run_are_attributed_to_it_by_the_default_alias(
    night: tuple[Path, list[str]],
) -> None:
    # no attribution config: `k8s-label/training_run` is the alias `training_run`; the cluster's
    # unallocated capacity and system overhead are its idle capacity, never unattributed
    with reading(night[0]) as conn:
        runs = conn.execute(
            "select coalesce(training_run, '-'), allocation_method, allocation_rule, cluster, count(*), "
            "sum(billed_cost), sum(effective_cost), sum(gpu_hours) from cost_allocations where x_SourceName = 'gke' "
            "group by all order by all"
        ).fetchall()
        unattributed = conn.execute(
            "select count(*) from unattributed_costs where provider = 'Google Cloud'"
        ).fetchall()
    assert runs == [
        ("-", "idle_capacity", "system overhead", "gpu-train-gke", 6, D("1.224"), D("1.224"), D("0")),
        ("-", "idle_capacity", "unallocated", "gpu-train-gke", 9, D("94.04"), D("94.04"), D("8")),
        ("llm-3b-eval-gke", "tag", "tag k8s-label/training_run", "gpu-train-gke", 6, D("45.28"), D("45.28"), D("4")),
        ("llm-3b-pt-gke", "tag", "tag k8s-label/training_run", "gpu-train-gke", 9, D("135.84"), D("135.84"), D("12")),
    ]
    assert unattributed == [(0,)]


def test_each_cluster_per_day_before_any_sharing(night: tuple[Path, list[str]]) -> None:
    # the GKE cluster: 24 GPU-hours billed, 16 held by workloads, 8 unallocated; the EKS cluster
    # (three sources of the same node): 3 x 24 GPU-hours, 3 x 20 held by pods, 3 x 4 idle
    with reading(night[0]) as conn:
        days = conn.execute(
            "select cluster, day, capacity_gpu_hours, allocated_gpu_hours, idle_gpu_hours, utilization, idle_cost, "
            "overhead_cost from cluster_utilization order by cluster"
        ).fetchall()
        shares = conn.execute(
            "select cluster, training_run, gpu_hours, share, effective_cost from run_cluster_share order by all"
        ).fetchall()
    day = date(2026, 11, 3)
    assert days == [
        ("gpu-train", day, D("72"), D("60"), D("12"), D("0.8333333333"), D("82.56"), D("0")),
        ("gpu-train-gke", day, D("24"), D("16"), D("8"), D("0.6666666667"), D("94.04"), D("1.224")),
    ]
    assert shares == [
        ("gpu-train", "llm-1b-eval-r2", D("18"), D("0.3"), D("123.84")),
        ("gpu-train", "llm-7b-sft-r1", D("36"), D("0.6"), D("247.68")),
        ("gpu-train-gke", "llm-3b-eval-gke", D("4"), D("0.25"), D("45.28")),
        ("gpu-train-gke", "llm-3b-pt-gke", D("12"), D("0.75"), D("135.84")),
    ]


def test_a_split_cost_that_is_not_a_number_names_the_file_row_and_column(tmp_path: Path) -> None:
    shutil.copytree(EKS / "legacy", tmp_path / "legacy")
    report = tmp_path / LEGACY_CSV
    lines = report.read_text().splitlines(keepends=True)
    assert ",12.4,0,12.4,0," in lines[2]
    lines[2] = lines[2].replace(",12.4,0,12.4,0,", ',"12,4",0,12.4,0,', 1)
    report.write_text("".join(lines))
    config = write_config(tmp_path, "sources:\n  - {name: eks, kind: aws_cur, uri: legacy/eks-split}\n")
    with pytest.raises(SourceError, match=rf"{report}, row 2, column split_line_item_split_cost: '12,4' is not"):
        ingest(config, date(2026, 11, 1))
