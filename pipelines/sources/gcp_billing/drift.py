"""The schema drift of a GCP billing export: the fields its mapping reads, against the export's
documented schema."""

from __future__ import annotations

from pipelines.sources.drift import ColumnDrift, compare_columns
from pipelines.sources.gcp_billing import export_rows

GCP_MAPPED_COLUMNS = (
    "billing_account_id",
    "service",
    "sku",
    "usage_start_time",
    "usage_end_time",
    "project",
    "labels",
    "location",
    "export_time",
    "cost",
    "currency",
    "usage",
    "credits",
    "invoice",
    "cost_type",
)
# Documented export columns the mapping does not read.
GCP_OTHER_COLUMNS = ("tags", "price", "transaction_type", "subscription", "consumption_model")


def column_drift(source_format: str, columns: list[str]) -> ColumnDrift:
    """The drift of a `gcp_billing` delivery."""
    return compare_columns(
        GCP_MAPPED_COLUMNS, columns, lambda column: column in export_rows.export_schema() or column in GCP_OTHER_COLUMNS
    )
