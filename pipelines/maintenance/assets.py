"""The weekly upkeep asset of the lake (its own job and schedule, not part of the nightly run)."""

import dagster as dg

from pipelines.orchestration.resources import WAREHOUSE_POOL, RunLedgerResource
from pipelines.warehouse.maintenance import maintain_lake


@dg.asset(group_name="maintenance", owners=["team:finops"], kinds={"duckdb"}, pool=WAREHOUSE_POOL)
def lake_maintenance(context: dg.AssetExecutionContext, runledger: RunLedgerResource) -> dg.MaterializeResult:
    """The lake's upkeep: snapshots older than `orchestration.snapshot_retention_days` (default 90)
    expired, so `--at` reaches back that far and no further; adjacent small data files merged; the
    data files only expired snapshots read deleted, and the data files the catalog does not know
    (left by a writer killed before its commit) deleted once a day old. Changes no row of any
    table."""
    config = runledger.load_config()
    retention = config.orchestration.snapshot_retention_days
    with runledger.warehouse(config) as conn:
        upkeep = maintain_lake(conn, retention)
    context.log.info(
        f"expired {upkeep.expired_snapshots:,} snapshots older than {retention} days, deleted {upkeep.deleted_files:,} "
        f"files and {upkeep.orphaned_files:,} files the catalog does not know; {upkeep.snapshots:,} snapshots and "
        f"{upkeep.data_files:,} data files remain"
    )
    return dg.MaterializeResult(
        metadata={
            "expired_snapshots": dg.MetadataValue.int(upkeep.expired_snapshots),
            "deleted_files": dg.MetadataValue.int(upkeep.deleted_files),
            "orphaned_files": dg.MetadataValue.int(upkeep.orphaned_files),
            "snapshots": dg.MetadataValue.int(upkeep.snapshots),
            "data_files": dg.MetadataValue.int(upkeep.data_files),
            "delete_files": dg.MetadataValue.int(upkeep.delete_files),
            "retention_days": dg.MetadataValue.int(retention),
        }
    )
