"""The `cluster_usage` asset: every scheduler source's usage intervals and nodes in the lake."""

import dagster as dg
import duckdb

from pipelines.clusters.usage import read_scheduler_sources, replace_cluster_usage_if_changed
from pipelines.orchestration.marts import Column, Format, Preview, markdown_table
from pipelines.orchestration.resources import WAREHOUSE_POOL, RunLedgerResource
from pipelines.orchestration.tables import holds_tables
from pipelines.warehouse.sql import dict_rows, read_sql

UNMAPPED_HOSTS_CHECK = "unmapped_hosts"
BY_CLUSTER = Preview(
    "by_cluster",
    ("inputs/cluster_intervals", "summary"),
    (
        Column("source", "source"),
        Column("cluster", "cluster"),
        Column("intervals", "intervals", Format.COUNT),
        Column("jobs", "jobs", Format.COUNT),
        Column("training_runs", "runs", Format.COUNT),
        Column("nodes", "nodes", Format.COUNT),
        Column("running", "running", Format.COUNT),
        Column("gpu_hours", "GPU-hours", Format.AMOUNT),
        Column("unmapped_hosts", "unmapped hosts", Format.COUNT),
    ),
)
UNMAPPED_HOSTS = (
    Column("source", "source"),
    Column("cluster", "cluster"),
    Column("node", "host"),
    Column("jobs", "jobs", Format.COUNT),
    Column("gpu_hours", "GPU-hours", Format.AMOUNT),
    Column("first_start", "from", Format.MINUTE),
    Column("last_end", "to", Format.MINUTE),
)


@dg.asset(
    group_name="clusters",
    owners=["team:finops"],
    kinds={"duckdb", "slurm", "kubernetes"},
    metadata=holds_tables("cluster_intervals", "cluster_nodes", "cluster_node_tags", "cluster_usage"),
    pool=WAREHOUSE_POOL,
    check_specs=[
        dg.AssetCheckSpec(
            UNMAPPED_HOSTS_CHECK,
            asset="cluster_usage",
            description="Every host a job ran on maps to a cloud resource (the scheduler's own id, the node map or "
            "the node tag): a job on a host no map names is listed here, and its share of the node stays the "
            "cluster's idle capacity.",
        )
    ],
)
def cluster_usage(context: dg.AssetExecutionContext, runledger: RunLedgerResource) -> dg.MaterializeResult:
    """The usage intervals of every scheduler source (`slurm`: sacct JSON files; `kubernetes`:
    pods from Prometheus) and their nodes, replaced in one transaction: a source that cannot be
    read fails the run naming its file, job or series, and the previous intervals are kept; not
    written when the sources read the same. The view `cluster_usage` maps each interval's host to
    its node's cloud resource, which attribution splits by the GPU-seconds each job held."""
    config = runledger.load_config()
    by_source = read_scheduler_sources(config)
    with runledger.warehouse(config) as conn:
        replaced = replace_cluster_usage_if_changed(conn, by_source, config.attribution.dimensions)
        by_cluster = BY_CLUSTER.render(conn)
        check = unmapped_hosts(conn)
    for source_name, read in by_source.items():
        context.log.info(
            f"{source_name}: {len(read.intervals):,} intervals of "
            f"{len({interval.job_id for interval in read.intervals}):,} jobs, {len(read.nodes):,} mapped nodes"
        )
    return dg.MaterializeResult(
        metadata={
            "intervals": dg.MetadataValue.int(sum(len(read.intervals) for read in by_source.values())),
            "replaced": dg.MetadataValue.bool(replaced),
            BY_CLUSTER.key: dg.MetadataValue.md(by_cluster),
        },
        check_results=[check],
    )


def unmapped_hosts(conn: duckdb.DuckDBPyConnection) -> dg.AssetCheckResult:
    """The unmapped_hosts check: the hosts jobs ran on that no node map resolves to a resource."""
    rows = dict_rows(conn.execute(read_sql("inputs/cluster_intervals", "unmapped_hosts")))
    return dg.AssetCheckResult(
        check_name=UNMAPPED_HOSTS_CHECK,
        passed=not rows,
        severity=dg.AssetCheckSeverity.WARN,
        description=(
            f"{len(rows)} host(s) map to no cloud resource: "
            + ", ".join(f"{row['cluster']}/{row['node']} ({row['jobs']} jobs)" for row in rows[:10])
            + "; add them to the node map (their share of the node stays idle capacity)"
            if rows
            else "every host maps to a cloud resource"
        ),
        metadata={"hosts": dg.MetadataValue.md(markdown_table(UNMAPPED_HOSTS, rows))},
    )
