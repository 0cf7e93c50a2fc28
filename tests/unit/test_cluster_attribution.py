"""The cluster step: a shared node's bill lines split among the jobs that held it by GPU-seconds,
the rest the cluster's idle capacity, checked against a hand computation.

Two p5.48xlarge nodes (8 GPUs, 98.32 USD an hour, billed 10:00-13:00 on 2026-10-05):

    p5-001   10-11: job 101 4 GPUs all hour (14,400 GPU-s); job 102 4 GPUs 10:00-10:20 and,
                    requeued, 10:40-11:00 (9,600); idle 4,800 of 28,800
             11-12: 101 until 11:30 (7,200); 102 all hour (14,400); job 104 from 11:30 (7,200): full
             12-13: 104 still running (14,400); idle 14,400
    p5-002   10-11: idle; 11-12: 104 from 11:30 (7,200); 12-13: 104 (14,400)

Job 104 holds 8 GPUs over both nodes (4 each) and is still running: it ends at its nodes' newest
billed hour, 13:00. Per run (by hand): sweep-a (101) 49.16 + 24.58 = 73.74 USD, 4 + 2 = 6 GPU-h;
sweep-b (102) 32.7733333333 + 49.16 = 81.9333333333, 2.6666666667 + 4 = 6.6666666667 GPU-h; eval
(104) 24.58 + 49.16 on each node = 147.48, 12 GPU-h; idle 16.3866666667 + 49.16 + 98.32 + 73.74 + 49.16 =
286.7666666667, 23.3333333333 GPU-h; together the six lines' 589.92 and 48 GPU-h.
"""

import os
import shutil
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path

import duckdb
import pytest

from pipelines.attribution.allocate import allocate_period, check_period, over_capacity
from pipelines.attribution.settings import DEFAULT_DIMENSIONS
from pipelines.clusters.usage import replace_cluster_usage_if_changed
from pipelines.sources.intervals import ClusterIntervals, ClusterNode, UsageInterval
from pipelines.sources.slurm.reader import read_intervals
from pipelines.sources.slurm.settings import SlurmSource
from pipelines.warehouse.sql import dict_rows, read_sql
from tests.support import FIXTURES

PERIOD = date(2026, 10, 1)
DAY = datetime(2026, 10, 5)
NODES = {"p5-001": "i-0c1a000000000001", "p5-002": "i-0c1a000000000002"}
SWEEP_A = {"training_run": "sweep-a", "experiment": "lr-sweep", "owner": "dana"}
SWEEP_B = {"Training-Run": "sweep-b", "experiment": "lr-sweep", "owner": "dana"}
EVAL = {"training_run": "eval", "experiment": "evals", "team": "erin"}


def at(hour: int, minute: int = 0) -> datetime:
    return DAY.replace(hour=hour, minute=minute)


def interval(node: str, job: str, start: datetime, end: datetime | None, gpus: str, labels: dict) -> UsageInterval:
    return UsageInterval("p5-cluster", node, job, start, end, Decimal(gpus), labels=labels)


JOBS = [
    interval("p5-001", "101", at(10), at(11, 30), "4", SWEEP_A),
    interval("p5-001", "102", at(10), at(10, 20), "4", SWEEP_B),
    interval("p5-001", "102", at(10, 40), at(12), "4", SWEEP_B),
    interval("p5-001", "104", at(11, 30), None, "4", EVAL),
    interval("p5-002", "104", at(11, 30), None, "4", EVAL),
]


def add_node_line(conn: duckdb.DuckDBPyConnection, node: str, hour: int, cost: str = "98.32") -> None:
    conn.execute(
        "insert into focus_line_items (x_LineItemKey, x_SourceName, x_SourceFormat, BillingCurrency, "
        "BillingPeriodStart, ChargePeriodStart, ChargePeriodEnd, ProviderName, ServiceName, ResourceId, BilledCost, "
        "EffectiveCost, x_CostCategory, x_InstanceType, x_GpuCount, x_GpuHours, Tags) values ($key, 'aws-main', "
        "'aws_cur2', 'USD', $period, $start, $end, 'Amazon Web Services', 'Amazon Elastic Compute Cloud', $resource, "
        "$cost, $cost, 'compute', 'p5.48xlarge', 8, 8, map())",
        {
            "key": f"{node}-{hour}",
            "period": datetime(2026, 10, 1),
            "start": at(hour),
            "end": at(hour + 1),
            "resource": NODES[node],
            "cost": Decimal(cost),
        },
    )


def load_cluster(conn: duckdb.DuckDBPyConnection, jobs: list[UsageInterval], nodes: dict[str, str] = NODES) -> None:
    for node in NODES:
        for hour in (10, 11, 12):
            add_node_line(conn, node, hour)
    mapped = [ClusterNode("p5-cluster", host, resource) for host, resource in nodes.items()]
    replace_cluster_usage_if_changed(conn, {"slurm-p5": ClusterIntervals(jobs, mapped)}, DEFAULT_DIMENSIONS)


def by_target(conn: duckdb.DuckDBPyConnection) -> dict[tuple, tuple]:
    rows = conn.execute(
        "select coalesce(training_run, allocation_method), sum(effective_cost), sum(billed_cost), sum(gpu_hours) "
        "from cost_allocations group by all"
    ).fetchall()
    return {row[0]: row[1:] for row in rows}


@pytest.fixture
def cluster(warehouse: duckdb.DuckDBPyConnection) -> duckdb.DuckDBPyConnection:
    load_cluster(warehouse, JOBS)
    return warehouse


def test_each_run_pays_for_the_gpu_seconds_its_jobs_held_and_the_rest_is_idle(
    cluster: duckdb.DuckDBPyConnection,
) -> None:
    allocate_period(cluster, PERIOD, DEFAULT_DIMENSIONS)

    assert by_target(cluster) == {
        "sweep-a": (Decimal("73.74"), Decimal("73.74"), Decimal("6")),
        "sweep-b": (Decimal("81.9333333333"), Decimal("81.9333333333"), Decimal("6.6666666667")),
        "eval": (Decimal("147.48"), Decimal("147.48"), Decimal("12")),
        "idle_capacity": (Decimal("286.7666666667"), Decimal("286.7666666667"), Decimal("23.3333333333")),
    }
    assert all(row["unbalanced_line_items"] == 0 for row in check_period(cluster, PERIOD))
    # the requeued job's two intervals and the first hour's idle 20 minutes, by hand
    first_hour = dict_rows(
        cluster.execute(
            "select job_id, allocation_method, allocation_rule, cluster, effective_cost, gpu_hours, experiment, owner "
            "from cost_allocations where x_LineItemKey = 'p5-001-10' order by all"
        )
    )
    assert [(r["job_id"], r["allocation_method"], r["effective_cost"], r["gpu_hours"]) for r in first_hour] == [
        ("101", "cluster", Decimal("49.16"), Decimal("4")),
        ("102", "cluster", Decimal("32.7733333333"), Decimal("2.6666666667")),
        (None, "idle_capacity", Decimal("16.3866666667"), Decimal("1.3333333333")),
    ]
    assert {r["cluster"] for r in first_hour} == {"p5-cluster"}
    assert first_hour[1]["allocation_rule"] == "cluster p5-cluster"
    assert (first_hour[1]["experiment"], first_hour[1]["owner"]) == ("lr-sweep", "dana")
    assert first_hour[2]["allocation_rule"] == "unallocated"


def test_cluster_usage_ends_a_running_job_at_its_nodes_newest_billed_hour(cluster: duckdb.DuckDBPyConnection) -> None:
    rows = cluster.execute(
        'select node, resource_id, training_run, owner, start, "end", running, gpus from cluster_usage '
        "where job_id = '104' order by node"
    ).fetchall()
    assert rows == [
        ("p5-001", NODES["p5-001"], "eval", "erin", at(11, 30), at(13), True, Decimal(4)),
        ("p5-002", NODES["p5-002"], "eval", "erin", at(11, 30), at(13), True, Decimal(4)),
    ]


def test_cluster_utilization_and_run_shares_per_day(cluster: duckdb.DuckDBPyConnection) -> None:
    allocate_period(cluster, PERIOD, DEFAULT_DIMENSIONS)
    cluster.execute(read_sql("marts/cluster_utilization", "insert"))
    cluster.execute(read_sql("marts/run_cluster_share", "insert"))

    (day,) = dict_rows(cluster.execute("select * from cluster_utilization"))
    assert (day["cluster"], day["day"], day["currency"]) == ("p5-cluster", date(2026, 10, 5), "USD")
    assert (day["capacity_gpu_hours"], day["allocated_gpu_hours"], day["idle_gpu_hours"]) == (
        Decimal(48),
        Decimal("24.6666666667"),
        Decimal("23.3333333333"),
    )
    assert day["utilization"] == Decimal("0.5138888889")
    assert (day["effective_cost"], day["idle_cost"], day["overhead_cost"]) == (
        Decimal("589.92"),
        Decimal("286.7666666667"),
        Decimal(0),
    )
    shares = {
        row[0]: row[1:]
        for row in cluster.execute(
            "select training_run, gpu_hours, share, effective_cost, idle_cost from run_cluster_share"
        ).fetchall()
    }
    assert shares == {
        "sweep-a": (Decimal(6), Decimal("0.2432432432"), Decimal("73.74"), Decimal(0)),
        "sweep-b": (Decimal("6.6666666667"), Decimal("0.2702702703"), Decimal("81.9333333333"), Decimal(0)),
        "eval": (Decimal(12), Decimal("0.4864864865"), Decimal("147.48"), Decimal(0)),
    }


def test_proportional_sharing_moves_the_idle_cost_exactly_to_the_days_runs(cluster: duckdb.DuckDBPyConnection) -> None:
    allocate_period(cluster, PERIOD, DEFAULT_DIMENSIONS)
    direct = by_target(cluster)
    allocate_period(cluster, PERIOD, DEFAULT_DIMENSIONS, share_idle=True)
    shared = dict(
        cluster.execute(
            "select training_run, sum(effective_cost) from cost_allocations "
            "where allocation_method = 'shared' and allocation_rule = 'idle p5-cluster' group by all"
        ).fetchall()
    )
    after = by_target(cluster)

    assert "idle_capacity" not in after
    assert sum(shared.values()) == direct["idle_capacity"][0]
    # weights: the GPU-hours each run held that day, to 1e-4: 6, 6.6667 and 12
    weights = {"sweep-a": Decimal(60000), "sweep-b": Decimal(66667), "eval": Decimal(120000)}
    for run, weight in weights.items():
        assert abs(shared[run] - direct["idle_capacity"][0] * weight / sum(weights.values())) < Decimal("1e-8")
        assert after[run][0] == direct[run][0] + shared[run]
    assert sum(row[2] for row in after.values()) == Decimal(48)
    assert all(row["unbalanced_line_items"] == 0 for row in check_period(cluster, PERIOD))

    allocate_period(cluster, PERIOD, DEFAULT_DIMENSIONS)
    assert by_target(cluster) == direct


def test_a_host_no_map_names_leaves_its_share_idle_and_is_listed(warehouse: duckdb.DuckDBPyConnection) -> None:
    load_cluster(warehouse, JOBS, nodes={"p5-001": NODES["p5-001"]})
    allocate_period(warehouse, PERIOD, DEFAULT_DIMENSIONS)

    unmapped = dict_rows(warehouse.execute(read_sql("inputs/cluster_intervals", "unmapped_hosts")))
    assert [(row["node"], row["jobs"], row["gpu_hours"]) for row in unmapped] == [("p5-002", 1, Decimal(6))]
    # p5-002's lines are no node's now: no scheduler job splits them, they stay unattributed
    assert by_target(warehouse)["eval"] == (Decimal("73.74"), Decimal("73.74"), Decimal(6))
    assert by_target(warehouse)["unattributed"][0] == Decimal("294.96")


def test_jobs_holding_more_than_the_node_are_scaled_to_it_and_listed(warehouse: duckdb.DuckDBPyConnection) -> None:
    crowded = [
        interval("p5-001", "201", at(10), at(11), "8", SWEEP_A),
        interval("p5-001", "202", at(10), at(11), "4", SWEEP_B),
    ]
    load_cluster(warehouse, crowded)
    allocate_period(warehouse, PERIOD, DEFAULT_DIMENSIONS)

    first_hour = dict(
        warehouse.execute(
            "select training_run, effective_cost from cost_allocations where x_LineItemKey = 'p5-001-10'"
        ).fetchall()
    )
    # 12 GPUs held on 8: scaled to 8, none idle
    assert first_hour == {"sweep-a": Decimal("65.5466666667"), "sweep-b": Decimal("32.7733333333")}
    (row,) = over_capacity(warehouse, PERIOD)
    assert (row["resource_id"], row["charge_start"], row["load"], row["jobs"]) == (
        NODES["p5-001"],
        at(10),
        Decimal("1.5"),
        2,
    )


def test_without_a_scheduler_source_the_step_changes_nothing(warehouse: duckdb.DuckDBPyConnection) -> None:
    add_node_line(warehouse, "p5-001", 10)
    allocate_period(warehouse, PERIOD, DEFAULT_DIMENSIONS)
    assert by_target(warehouse) == {"unattributed": (Decimal("98.32"), Decimal("98.32"), Decimal(8))}
    assert over_capacity(warehouse, PERIOD) == []


def test_a_real_sacct_dump_splits_its_node(warehouse: duckdb.DuckDBPyConnection, tmp_path: Path) -> None:
    """Slurm 22.05's `sacct --json`, twice (tests/fixtures/slurm/: the second dump has job 2 finished
    and job 3 requeued, still running), on gpu-node1 (8 GPUs) billed 98.32 for 05:00-06:00: llm-7b
    holds 2 GPUs x 1 s (job 1) + 1 GPU x 2 s and, requeued, 1 GPU x 3,039 s to the billed hour's end
    (job 3); llm-13b 4 GPUs x 5 s (job 2); of 28,800 GPU-seconds."""
    dumps = tmp_path / "sacct"
    dumps.mkdir()
    for order, name in enumerate(("first", "second")):
        copy = dumps / f"{name}.json"
        shutil.copy(FIXTURES / "slurm" / f"sacct_22.05_{name}.json", copy)
        os.utime(copy, (1_000_000 + order, 1_000_000 + order))
    (tmp_path / "nodes.csv").write_text("hostname,resource_id,start,end\ngpu-node1,i-0d5e000000000001,,\n")
    source = SlurmSource(name="slurm-lab", kind="slurm", path="sacct", cluster="lab", nodes="nodes.csv")
    warehouse.execute(
        "insert into focus_line_items (x_LineItemKey, x_SourceName, x_SourceFormat, BillingCurrency, "
        "BillingPeriodStart, ChargePeriodStart, ChargePeriodEnd, ResourceId, BilledCost, EffectiveCost, "
        "x_CostCategory, x_GpuCount, x_GpuHours, Tags) values ('node1-05', 'aws-main', 'aws_cur2', 'USD', "
        "'2026-12-01', '2026-12-07 05:00', '2026-12-07 06:00', 'i-0d5e000000000001', 98.32, 98.32, 'compute', 8, 8, "
        "map())"
    )
    read = read_intervals(source, lambda path: tmp_path / path)
    replace_cluster_usage_if_changed(warehouse, {"slurm-lab": read}, DEFAULT_DIMENSIONS)
    allocate_period(warehouse, date(2026, 12, 1), DEFAULT_DIMENSIONS)

    held = {"llm-7b": 2 + 2 + 3039, "llm-13b": 20}
    costs = by_target(warehouse)
    for run, gpu_seconds in held.items():
        assert abs(costs[run][0] - Decimal("98.32") * gpu_seconds / 28800) <= Decimal("2e-10")
        assert abs(costs[run][2] - Decimal(8) * gpu_seconds / 28800) <= Decimal("2e-10")
    assert sum(cost[0] for cost in costs.values()) == Decimal("98.32")
    assert costs["idle_capacity"][2] + costs["llm-7b"][2] + costs["llm-13b"][2] == Decimal(8)
    jobs = warehouse.execute("select job_id, count(*) from cluster_usage group by all order by all").fetchall()
    assert jobs == [("1", 1), ("2", 1), ("3", 2)]
