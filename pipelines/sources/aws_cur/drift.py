"""The schema drift of AWS deliveries: CUR 2.0 against the columns its mapping reads and the
column families of its fixed schema, a legacy CUR by the same names (less the CUR 2.0-only ones,
and one column per tag or cost category), an AWS FOCUS export as any FOCUS file."""

from __future__ import annotations

from pipelines.sources.aws_cur import cur2, legacy_cur
from pipelines.sources.drift import ColumnDrift, compare_columns, focus_drift

# The split cost allocation columns the mapping also reads (`split_line_item_parent_resource_id`,
# `_split_cost`, `_unused_cost`) are not here: only exports that include split cost allocation
# data have them, so a delivery without them has not drifted (their family is known, below).
CUR2_MAPPED_COLUMNS = (
    *cur2.REQUIRED_COLUMNS,
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


def _is_cur2_column(column: str) -> bool:
    return column in CUR2_MAP_COLUMNS or column.startswith(CUR2_COLUMN_FAMILIES)


def _legacy_drift(columns: list[str]) -> ColumnDrift:
    names = {column: legacy_cur.parquet_column_name(column) if "/" in column else column for column in columns}
    present = set(names.values())
    missing = tuple(c for c in CUR2_MAPPED_COLUMNS if c not in CUR2_ONLY_COLUMNS and c not in present)
    new = tuple(
        column
        for column, name in names.items()
        if not name.startswith(LEGACY_PER_KEY_COLUMNS) and not _is_cur2_column(name)
    )
    return ColumnDrift(missing=missing, new=new)


def column_drift(source_format: str, columns: list[str]) -> ColumnDrift:
    """The drift of a delivery in `aws_cur2`, `aws_focus`, `aws_legacy_csv` or `aws_legacy_parquet`.
    A legacy Parquet export read without a manifest declares no columns: nothing to compare."""
    if source_format in LEGACY_FORMATS:
        return _legacy_drift(columns) if columns else ColumnDrift(missing=(), new=())
    if source_format == "aws_focus":
        return focus_drift(source_format, columns)
    return compare_columns(CUR2_MAPPED_COLUMNS, columns, _is_cur2_column)
