"""Schema drift: the columns a source delivered against the columns its reader expects.

A column is *missing* when the reader maps it and the delivery lacks it (the reader then fills
NULL, so the load still succeeds with less information). A column is *new* when the format's
documented schema does not know it: AWS renamed or added something, Google added a column, a
FOCUS export carries a column of a newer FOCUS version or one of its own without the `x_` prefix
(kept, as every column of a FOCUS file the table has no column for, in x_ExtraColumns). Either is
worth a warning, never a failed load.
"""

from __future__ import annotations

from dataclasses import dataclass

from pipelines.ingest.formats import aws_cur2, aws_legacy_cur, focus_files, gcp_billing, manual_costs
from pipelines.warehouse.catalog import table_columns

CUR2_MAPPED_COLUMNS = (
    *aws_cur2.REQUIRED_COLUMNS,
    "bill_billing_period_end_date",
    "bill_invoice_id",
    "bill_invoicing_entity",
    "bill_payer_account_id",
    "bill_payer_account_name",
    "line_item_availability_zone",
    "line_item_line_item_description",
    "line_item_net_unblended_cost",
    "line_item_product_code",
    "line_item_resource_id",
    "line_item_usage_account_id",
    "line_item_usage_account_name",
    "line_item_usage_amount",
    "line_item_usage_type",
    "pricing_public_on_demand_cost",
    "pricing_public_on_demand_rate",
    "pricing_term",
    "pricing_unit",
    "product",
    "product_instance_type",
    "product_region_code",
    "product_servicecode",
    "product_sku",
    "reservation_effective_cost",
    "reservation_reservation_a_r_n",
    "reservation_unused_amortized_upfront_fee_for_billing_period",
    "reservation_unused_recurring_fee",
    "resource_tags",
    "savings_plan_savings_plan_a_r_n",
    "savings_plan_savings_plan_effective_cost",
    "savings_plan_total_commitment_to_date",
    "savings_plan_used_commitment",
)
# CUR 2.0 has a fixed schema whose columns all belong to these families.
CUR2_COLUMN_FAMILIES = (
    "bill_",
    "identity_",
    "line_item_",
    "pricing_",
    "product_",
    "reservation_",
    "savings_plan_",
    "split_line_item_",
    "discount_",
    "capacity_reservation_",
)
CUR2_MAP_COLUMNS = ("product", "resource_tags", "cost_category", "discount")
# Legacy CUR (CSV `lineItem/UnblendedCost` or its Parquet `line_item_unblended_cost`) has the
# CUR 2.0 columns by name, without these, and one column per tag or cost category.
LEGACY_FORMATS = ("aws_legacy_csv", "aws_legacy_parquet")
CUR2_ONLY_COLUMNS = ("bill_payer_account_name", "line_item_usage_account_name", "product", "resource_tags")
LEGACY_PER_KEY_COLUMNS = ("resource_tags_", "cost_category_")

FOCUS_MAPPED_COLUMNS = (
    *focus_files.REQUIRED_COLUMNS,
    "ChargeCategory",
    "ChargePeriodEnd",
    "BillingPeriodEnd",
    "ResourceId",
    "ServiceName",
    "Tags",
)
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


@dataclass(frozen=True)
class ColumnDrift:
    """How a delivery's columns differ from what the reader expects.

    Attributes:
        missing: columns the reader maps that the delivery lacks.
        new: columns the delivery has that the format's known schema does not.
    """

    missing: tuple[str, ...]
    new: tuple[str, ...]

    @property
    def drifted(self) -> bool:
        return bool(self.missing or self.new)


def _legacy_drift(columns: list[str]) -> ColumnDrift:
    names = {column: aws_legacy_cur.parquet_column_name(column) if "/" in column else column for column in columns}
    present = set(names.values())
    missing = tuple(c for c in CUR2_MAPPED_COLUMNS if c not in CUR2_ONLY_COLUMNS and c not in present)
    new = tuple(
        column
        for column, name in names.items()
        if not name.startswith(LEGACY_PER_KEY_COLUMNS) and not _is_known("aws_cur2", name)
    )
    return ColumnDrift(missing=missing, new=new)


def _is_known(source_format: str, column: str) -> bool:
    if source_format == "aws_cur2":
        return column in CUR2_MAP_COLUMNS or column.startswith(CUR2_COLUMN_FAMILIES)
    if source_format == "gcp_billing":
        return column in gcp_billing.export_schema() or column in GCP_OTHER_COLUMNS
    if source_format == "manual_costs":
        # the reader refuses a column that is neither a manual cost column nor a dimension
        return True
    # every FOCUS 1.0-1.2 column is a focus_line_items column; x_ columns are the export's own
    return column in table_columns("focus_line_items") or column.startswith("x_")


EXPECTED_COLUMNS = {
    "aws_cur2": CUR2_MAPPED_COLUMNS,
    "aws_focus": FOCUS_MAPPED_COLUMNS,
    "focus": FOCUS_MAPPED_COLUMNS,
    "gcp_billing": GCP_MAPPED_COLUMNS,
    "manual_costs": manual_costs.REQUIRED_COLUMNS,
}


def column_drift(source_format: str, columns: list[str]) -> ColumnDrift:
    """The missing and new columns of a delivery in `source_format` (`aws_cur2`, `aws_focus`,
    `aws_legacy_csv`, `aws_legacy_parquet`, `focus`, `gcp_billing`, `manual_costs`). A legacy Parquet export
    read without a manifest declares no columns: nothing to compare."""
    if source_format in LEGACY_FORMATS:
        return _legacy_drift(columns) if columns else ColumnDrift(missing=(), new=())
    present = set(columns)
    missing = tuple(c for c in EXPECTED_COLUMNS[source_format] if c not in present)
    new = tuple(c for c in columns if not _is_known(source_format, c))
    return ColumnDrift(missing=missing, new=new)
