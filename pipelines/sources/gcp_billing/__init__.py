"""`gcp_billing`: the GCP Cloud Billing export, its BigQuery table or a local folder of its files.

settings.py (`GcpBillingSource`), reader.py (the files, or the table read incrementally),
export_rows.py (the export's rows typed, a BigQuery snapshot keyed), drift.py, mapping.sql
(export → FOCUS), totals.sql (an invoice month's raw control totals), snapshot_keys.sql,
export_state.sql (a BigQuery source's incremental state, read from `loads`).
"""

from pipelines.sources.gcp_billing.settings import GcpBillingSource
from pipelines.sources.kind import SourceKind, deferred

KIND = SourceKind(
    name="gcp_billing",
    settings=GcpBillingSource,
    billing=True,
    dagster_kinds=frozenset({"gcp", "polars", "duckdb"}),
    description="polars reads and types the export's rows (the BigQuery table or exported files), DuckDB maps "
    "them onto FOCUS 1.2",
    reader=deferred("pipelines.sources.gcp_billing.reader", "open_reader"),
    source_formats=("gcp_billing",),
    drift=deferred("pipelines.sources.gcp_billing.drift", "column_drift"),
)
