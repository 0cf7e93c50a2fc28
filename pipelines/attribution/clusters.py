"""What the split of shared clusters' bills shows: `cluster_utilization` and `run_cluster_share`."""

from pipelines.attribution.assets import cost_allocations
from pipelines.orchestration.marts import Column, Format, Mart, Preview
from pipelines.warehouse.sql import read_sql

CLUSTER_UTILIZATION = Mart(
    name="cluster_utilization",
    group="attribution",
    description="`cluster_utilization`: each shared cluster per day — the GPU-hours its nodes were billed for, "
    "the part jobs held and the idle part, utilization, and the idle and system overhead cost, before any sharing. "
    "Rebuilt whole, only when the allocations changed.",
    inputs=(cost_allocations,),
    build=lambda conn: conn.execute(read_sql("marts/cluster_utilization", "insert")),
    previews=(
        Preview(
            "by_cluster",
            ("marts/cluster_utilization", "summary"),
            (
                Column("cluster", "cluster"),
                Column("first_day", "from"),
                Column("last_day", "to"),
                Column("capacity_gpu_hours", "capacity GPU-h", Format.AMOUNT),
                Column("allocated_gpu_hours", "allocated GPU-h", Format.AMOUNT),
                Column("idle_gpu_hours", "idle GPU-h", Format.AMOUNT),
                Column("utilization", "utilization", Format.SHARE),
                Column("idle_cost", "idle cost", Format.AMOUNT, unit="currency"),
            ),
        ),
    ),
)
cluster_utilization = CLUSTER_UTILIZATION.asset()

RUN_CLUSTER_SHARE = Mart(
    name="run_cluster_share",
    group="attribution",
    description="`run_cluster_share`: each training run's share of each shared cluster per day — the GPU-hours "
    "its jobs held, their share of all jobs' GPU-hours, and its cost there (shared idle capacity apart). Rebuilt "
    "whole, only when the allocations or the clusters' utilization changed.",
    inputs=(cost_allocations, cluster_utilization),
    build=lambda conn: conn.execute(read_sql("marts/run_cluster_share", "insert")),
    previews=(
        Preview(
            "by_run",
            ("marts/run_cluster_share", "summary"),
            (
                Column("cluster", "cluster"),
                Column("training_run", "run"),
                Column("gpu_hours", "GPU-hours", Format.AMOUNT),
                Column("share", "share", Format.SHARE),
                Column("effective_cost", "effective cost", Format.AMOUNT, unit="currency"),
                Column("idle_cost", "of which idle", Format.AMOUNT, unit="currency"),
            ),
        ),
    ),
)
run_cluster_share = RUN_CLUSTER_SHARE.asset()
