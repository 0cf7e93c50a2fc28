"""Telemetry assets: each GPU's utilization by hour from the telemetry sources, and each run's
utilization and data-wait share by hour. Telemetry never changes a cost."""

import dagster as dg
import duckdb

from pipelines.attribution.assets import cost_allocations, reconciliation
from pipelines.clusters.assets import cluster_usage
from pipelines.config import RunLedgerConfig
from pipelines.ingest.assets import FOCUS_LINE_ITEMS
from pipelines.orchestration.marts import Check, Column, Format, Mart, Preview, markdown_table, reads
from pipelines.orchestration.resources import WAREHOUSE_POOL, RunLedgerResource
from pipelines.orchestration.tables import holds_tables
from pipelines.progress.assets import run_events
from pipelines.tags.assets import resource_tag_snapshots
from pipelines.telemetry.utilization import read_telemetry_sources, replace_gpu_utilization_if_changed
from pipelines.warehouse.connection import MACROS
from pipelines.warehouse.sql import dict_rows, read_sql

GROUP = "telemetry"
BY_SOURCE = Preview(
    "by_source",
    ("inputs/gpu_utilization", "summary"),
    (
        Column("source_name", "source"),
        Column("series", "series", Format.COUNT),
        Column("gpus", "GPUs", Format.COUNT),
        Column("hours", "hours", Format.COUNT),
        Column("samples", "samples", Format.COUNT),
        Column("gpu_utilization", "mean utilization", Format.SHARE),
    ),
)
UNATTRIBUTED_GPU_HOURS_CHECK = "unattributed_gpu_hours"
UNATTRIBUTED = (
    Column("source_name", "source"),
    Column("reason", "why"),
    Column("series", "series", Format.COUNT),
    Column("gpu_hours", "GPU-hours", Format.COUNT),
    Column("first_hour", "from", Format.MINUTE),
    Column("last_hour", "to", Format.MINUTE),
    Column("example", "for example"),
)


@dg.asset(
    group_name=GROUP,
    owners=["team:finops"],
    kinds={"duckdb", "prometheus"},
    metadata=holds_tables("gpu_utilization", "gpu_utilization_runs"),
    pool=WAREHOUSE_POOL,
)
def gpu_utilization(context: dg.AssetExecutionContext, runledger: RunLedgerResource) -> dg.MaterializeResult:
    """Each GPU's utilization samples summed by hour, from every `prometheus` source (NVIDIA DCGM
    exporter series, a server or saved responses) and the system metrics of every `run_events`
    source on MLflow, replaced in one transaction: a source that cannot be read fails the run naming
    its URL, file or series, and the previous rows are kept; not written when the sources read
    the same."""
    config = runledger.load_config()
    by_source = read_telemetry_sources(config)
    with runledger.warehouse(config) as conn:
        replaced = replace_gpu_utilization_if_changed(conn, by_source)
        by_source_table = BY_SOURCE.render(conn)
    for source_name, gpu_hours in by_source.items():
        context.log.info(
            f"{source_name}: {sum(gpu_hour.samples for gpu_hour in gpu_hours):,} samples of "
            f"{len({gpu_hour.gpu for gpu_hour in gpu_hours}):,} GPUs in {len(gpu_hours):,} GPU-hours"
        )
    return dg.MaterializeResult(
        metadata={
            "gpu_hours": dg.MetadataValue.int(sum(len(gpu_hours) for gpu_hours in by_source.values())),
            "replaced": dg.MetadataValue.bool(replaced),
            BY_SOURCE.key: dg.MetadataValue.md(by_source_table),
        }
    )


def unattributed_gpu_hours(conn: duckdb.DuckDBPyConnection, _: RunLedgerConfig) -> dg.AssetCheckResult:
    """The check: GPU-hours of the telemetry that reach no run, by source and reason."""
    rows = dict_rows(conn.execute(read_sql("marts/run_utilization", "unattributed")))
    return dg.AssetCheckResult(
        check_name=UNATTRIBUTED_GPU_HOURS_CHECK,
        passed=not rows,
        severity=dg.AssetCheckSeverity.WARN,
        description=(
            "; ".join(
                f"{row['source_name']}: {row['gpu_hours']:,} GPU-hours of {row['series']:,} series, {row['reason']}"
                for row in rows
            )
            + " (counted in no run's utilization)"
            if rows
            else "every GPU-hour of the telemetry reaches a run"
        ),
        metadata={
            "gpu_hours": dg.MetadataValue.int(sum(row["gpu_hours"] for row in rows)),
            "by_reason": dg.MetadataValue.md(markdown_table(UNATTRIBUTED, rows)),
        },
    )


RUN_UTILIZATION = Mart(
    name="run_utilization",
    group=GROUP,
    description="`run_utilization`: each training run's GPU utilization (the mean over its GPUs) and the share of "
    "step time spent waiting for data, by hour, with the data-wait GPU-hours; a GPU reaches a run through the run "
    "attribution gave its resource in that hour (tag, cluster share, registry) or the run its MLflow run names. "
    "Rebuilt whole after reconciliation, only when a table it reads changed; never changes a cost.",
    # gpu_utilization_runs (a view) reads the line items (a GKE node's ResourceName) and the tag
    # snapshots (nodes named by a tag) besides the allocations and the node maps
    inputs=(
        gpu_utilization,
        cost_allocations,
        FOCUS_LINE_ITEMS,
        resource_tag_snapshots,
        reads(cluster_usage, "cluster_nodes", "cluster_node_tags"),
        run_events,
    ),
    after=(reconciliation,),
    build=lambda conn: conn.execute(read_sql("marts/run_utilization", "insert")),
    sql=("marts/run_utilization", "marts/gpu_utilization_runs", MACROS),
    previews=(
        Preview(
            "by_run",
            ("marts/run_utilization", "summary"),
            (
                Column("training_run", "run"),
                Column("hours", "hours", Format.COUNT),
                Column("gpu_utilization", "mean utilization", Format.SHARE),
                Column("lowest_hour", "lowest hour", Format.SHARE),
                Column("data_wait_share", "data wait", Format.SHARE),
                Column("data_wait_gpu_hours", "data-wait GPU-h", Format.AMOUNT),
            ),
        ),
    ),
    checks=(
        Check(
            UNATTRIBUTED_GPU_HOURS_CHECK,
            "Every GPU-hour of the telemetry reaches a run: a series whose host maps to no cloud resource, whose "
            "resource's hour attribution gave to no run (or that is not billed yet), or a shared node's hour the "
            "series names no job of, is counted here and in no run's utilization.",
            unattributed_gpu_hours,
        ),
    ),
)
run_utilization = RUN_UTILIZATION.asset()
