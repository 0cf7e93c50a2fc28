"""One reader per configured billing source: its billing periods and, per period, the delivery
DuckDB maps onto FOCUS with its raw control totals (`base.PeriodBatch`)."""

from __future__ import annotations

import duckdb

from connectors.aws.exports import local_export_client, s3_export_client
from connectors.gcp.billing_export import BigQueryBillingExport
from connectors.gcp.settings import GCP_EXPORT_SUFFIXES
from connectors.local.files import list_export_files
from connectors.local.settings import FOCUS_SUFFIXES
from pipelines.config import (
    AwsCurSource,
    BillingSource,
    FocusSource,
    GcpBillingSource,
    ManualCostsSource,
    RunLedgerConfig,
)
from pipelines.config_rules import ConfigError
from pipelines.ingest.formats import manual_costs
from pipelines.ingest.readers.aws import AwsExportReader
from pipelines.ingest.readers.base import BillingSourceReader
from pipelines.ingest.readers.focus import FocusFilesReader
from pipelines.ingest.readers.gcp import ExportState, GcpBigQueryReader, GcpExportFilesReader
from pipelines.ingest.readers.manual import ManualCostsReader


def reader_for(
    source: BillingSource,
    config: RunLedgerConfig,
    *,
    warehouse: duckdb.DuckDBPyConnection | None = None,
    full_refresh: bool = False,
) -> BillingSourceReader:
    """The reader of a configured billing source.

    Args:
        source: the configured source.
        config: the whole configuration (paths resolve against it).
        warehouse: where incremental sources (BigQuery) find their watermark; None reads them
            as if nothing was loaded yet.
        full_refresh: incremental sources list every billing period, not only those with new rows.

    Raises:
        ConfigError: for a source that is not a billing source.
    """
    index = config.sources.index(source)
    staging = config.lake.staging_dir
    if isinstance(source, AwsCurSource):
        cache_dir = config.lake.cache_dir / source.name
        if source.is_local:
            return AwsExportReader(source, local_export_client(config.resolve(source.uri), cache_dir), staging)
        return AwsExportReader(source, s3_export_client(source.uri, cache_dir, source.endpoint_url), staging)
    if isinstance(source, GcpBillingSource):
        if source.table is not None:
            export = BigQueryBillingExport.connect(
                source.table, project=source.project, endpoint_url=source.endpoint_url
            )
            state = ExportState.read(warehouse, source.name)
            return GcpBigQueryReader(source.name, export, state, staging, full_refresh=full_refresh)
        files = list_export_files(config.resolve(source.path), GCP_EXPORT_SUFFIXES)
        return GcpExportFilesReader(source.name, files, staging)
    if isinstance(source, FocusSource):
        return FocusFilesReader(source.name, list_export_files(config.resolve(source.path), FOCUS_SUFFIXES), staging)
    if isinstance(source, ManualCostsSource):
        files = list_export_files(config.resolve(source.path), manual_costs.SUFFIXES)
        dimension_tags = {dimension: keys[0] for dimension, keys in config.attribution.dimensions.items()}
        return ManualCostsReader(source.name, files, staging, dimension_tags)
    raise ConfigError(f"sources[{index}]: kind {source.kind} is not a billing source")
