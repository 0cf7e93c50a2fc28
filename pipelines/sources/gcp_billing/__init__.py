"""`gcp_billing`: the GCP Cloud Billing export, its BigQuery table or a local folder of its files.

settings.py (`GcpBillingSource`), reader.py (the files, or the table read incrementally),
export_rows.py (the export's rows typed, a BigQuery snapshot keyed), drift.py, mapping.sql
(export → FOCUS), totals.sql (an invoice month's raw control totals), snapshot_keys.sql,
export_state.sql (a BigQuery source's incremental state, read from `loads`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pipelines.sources.gcp_billing.settings import GcpBillingSource
from pipelines.sources.kind import ReaderPlace, SourceKind

if TYPE_CHECKING:
    from pipelines.sources.drift import ColumnDrift
    from pipelines.sources.gcp_billing.reader import GcpBigQueryReader, GcpExportFilesReader


def open_reader(source: GcpBillingSource, place: ReaderPlace) -> GcpBigQueryReader | GcpExportFilesReader:
    from pipelines.sources.gcp_billing import reader

    return reader.open_reader(source, place)


def column_drift(source_format: str, columns: list[str]) -> ColumnDrift:
    from pipelines.sources.gcp_billing import drift

    return drift.column_drift(source_format, columns)


KIND = SourceKind(
    name="gcp_billing",
    settings=GcpBillingSource,
    billing=True,
    dagster_kinds=frozenset({"gcp", "polars", "duckdb"}),
    description="polars reads and types the export's rows (the BigQuery table or exported files), DuckDB maps "
    "them onto FOCUS 1.2",
    reader=open_reader,
    source_formats=("gcp_billing",),
    drift=column_drift,
)
