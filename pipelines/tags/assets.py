"""The tag snapshot asset: every configured `aws_tags` source, one dated snapshot per run."""

from datetime import UTC, datetime

import dagster as dg

from connectors.aws.tagging import tagged_resources
from pipelines.orchestration.resources import WAREHOUSE_POOL, RunLedgerResource
from pipelines.orchestration.tables import holds_tables
from pipelines.sources.aws_tags.settings import AwsTagsSource
from pipelines.tags.snapshot import append_snapshot


@dg.asset(
    group_name="ingest",
    owners=["team:finops"],
    kinds={"aws", "duckdb"},
    metadata=holds_tables("resource_tag_snapshots"),
    pool=WAREHOUSE_POOL,
)
def resource_tag_snapshots(context: dg.AssetExecutionContext, runledger: RunLedgerResource) -> dg.MaterializeResult:
    """Resource tags from the AWS Resource Groups Tagging API (`GetResources` in every configured
    region, every page), appended to `resource_tag_snapshots` as one dated snapshot per
    `aws_tags` source, so tag history is kept: attribution uses the snapshot valid at a line's
    charge time."""
    config = runledger.load_config()
    sources = [s for s in config.sources if isinstance(s, AwsTagsSource)]
    snapshot_at = datetime.now(UTC).replace(tzinfo=None)
    counts = {}
    with runledger.warehouse(config) as conn:
        for source in sources:
            counts[source.name] = append_snapshot(
                conn,
                source.name,
                tagged_resources(source.regions, source.endpoint_url),
                snapshot_at,
                config.lake.staging_dir,
            )
            context.log.info(
                f"{source.name}: {counts[source.name]:,} resources in {', '.join(source.regions)} "
                f"at {snapshot_at:%Y-%m-%d %H:%M:%S} UTC"
            )
    return dg.MaterializeResult(
        metadata={
            "resources": dg.MetadataValue.int(sum(counts.values())),
            "sources": dg.MetadataValue.int(len(counts)),
            "snapshot_at": dg.MetadataValue.text(f"{snapshot_at:%Y-%m-%dT%H:%M:%S}Z"),
        }
    )
