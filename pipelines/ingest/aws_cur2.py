"""AWS CUR 2.0 (Data Exports, Parquet) normalized onto FOCUS 1.2, lazily.

BilledCost = coalesce(net unblended, unblended). EffectiveCost follows the amortization rule of
AWS's Cloud Intelligence Dashboards (../shared/BILLING.md): Savings-Plan-covered usage at its SP
effective cost, negations and upfront fees 0, RI usage at its reservation effective cost, and
RI/SP fees at their unused part.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date
from pathlib import Path

import polars as pl

from connectors.errors import SourceError, missing_columns_error
from pipelines.ingest.focus_schema import (
    MONEY,
    blank_to_null,
    money,
    service_category_from_cost_category,
    to_focus_columns,
)
from pipelines.ingest.mappings import CategoryRule, aws_service_categories, cost_category_expr, with_gpu_count

PROVIDER = "Amazon Web Services"
REQUIRED_COLUMNS = (
    "bill_billing_period_start_date",
    "line_item_line_item_type",
    "line_item_unblended_cost",
    "line_item_usage_start_date",
    "line_item_usage_end_date",
    "line_item_currency_code",
)
TIMESTAMP_COLUMNS = ("bill_billing_period_start_date", "line_item_usage_start_date", "line_item_usage_end_date")
USAGE_TYPES = ("Usage", "DiscountedUsage", "SavingsPlanCoveredUsage")
CHARGE_CATEGORY = {
    "Usage": "Usage",
    "DiscountedUsage": "Usage",
    "SavingsPlanCoveredUsage": "Usage",
    "SavingsPlanNegation": "Usage",
    "BundledDiscount": "Usage",
    "EdpDiscount": "Usage",
    "PrivateRateDiscount": "Usage",
    "Discount": "Usage",
    "SavingsPlanUpfrontFee": "Purchase",
    "SavingsPlanRecurringFee": "Purchase",
    "RIFee": "Purchase",
    "Fee": "Purchase",
    "Tax": "Tax",
    "Credit": "Credit",
}
CHARGE_FREQUENCY = {
    "SavingsPlanRecurringFee": "Recurring",
    "RIFee": "Recurring",
    "SavingsPlanUpfrontFee": "One-Time",
    "Fee": "One-Time",
    "Credit": "One-Time",
    "Refund": "One-Time",
}
PRICING_CATEGORY = {"OnDemand": "Standard", "Reserved": "Committed", "Spot": "Dynamic"}


def scan_cur2(files: Sequence[Path]) -> pl.LazyFrame:
    """The delivery's Parquet files as one lazy frame, with the file path of each row."""
    return pl.concat(scan_cur2_files(files), how="diagonal_relaxed")


def scan_cur2_files(files: Sequence[Path]) -> list[pl.LazyFrame]:
    """Each of the delivery's Parquet files as a lazy frame, with the file path of each row.

    Every file's own schema (its footer) is checked, and files are scanned each with its own
    schema: one scan of all files would take the first file's schema for all, turning a later
    file without its cost column into zero cost, and failing on a later file's extra column.

    Raises:
        SourceError: naming the file that cannot be read or lacks a required column.
    """
    if not files:
        raise SourceError("the delivery lists no CUR 2.0 files")
    frames = []
    for file in files:
        try:
            names = pl.read_parquet_schema(file)
        except (pl.exceptions.PolarsError, OSError) as error:
            raise SourceError(f"cannot read CUR 2.0 file {file}: {error}") from None
        missing = [c for c in REQUIRED_COLUMNS if c not in names]
        if missing:
            raise missing_columns_error(file, "CUR 2.0", missing, names)
        frames.append(pl.scan_parquet(file, include_file_paths="_source_file"))
    return frames


def raw_control_totals(files: Sequence[Path]) -> tuple[int, object]:
    """Row count and Σ coalesce(net unblended, unblended) read straight from the raw files."""
    return control_totals(scan_cur2(files))


def control_totals(frame: pl.LazyFrame) -> tuple[int, object]:
    """Row count and Σ coalesce(net unblended, unblended) of a frame with the CUR 2.0 columns.

    The pass also reads the required timestamps, so a value that is not a number or a timestamp
    fails here, before anything is staged.
    """
    totals = frame.select(
        pl.len().alias("rows"),
        _billed_cost(frame).sum().alias("billed"),
        *[pl.col(name).max() for name in TIMESTAMP_COLUMNS],
    ).collect()
    return int(totals["rows"][0]), totals["billed"][0]


def _column(frame_names: set[str], name: str, dtype: pl.DataType = pl.String) -> pl.Expr:
    """A column that a CUR 2.0 export may lack (older exports, schema drift) as NULL."""
    return pl.col(name) if name in frame_names else pl.lit(None, dtype=dtype)


def _billed_cost(frame: pl.LazyFrame) -> pl.Expr:
    names = set(frame.collect_schema().names())
    net = money(_column(names, "line_item_net_unblended_cost", pl.Float64))
    return pl.coalesce(net, money("line_item_unblended_cost"))


def _with_net(names: set[str], column: str, net_column: str) -> pl.Expr:
    """A cost measure, preferring its `*_net_*` twin where the export has one."""
    gross = money(_column(names, column, pl.Float64))
    if net_column in names:
        return pl.coalesce(money(net_column), gross)
    return gross


def _effective_cost(names: set[str]) -> pl.Expr:
    line_type = pl.col("line_item_line_item_type")
    has_reservation = blank_to_null(_column(names, "reservation_reservation_a_r_n")).is_not_null()
    zero = pl.lit(0, dtype=MONEY)
    sp_effective = _with_net(
        names, "savings_plan_savings_plan_effective_cost", "savings_plan_net_savings_plan_effective_cost"
    )
    sp_unused = money(_column(names, "savings_plan_total_commitment_to_date", pl.Float64)) - money(
        _column(names, "savings_plan_used_commitment", pl.Float64)
    )
    ri_effective = _with_net(names, "reservation_effective_cost", "reservation_net_effective_cost")
    ri_unused = _with_net(
        names,
        "reservation_unused_amortized_upfront_fee_for_billing_period",
        "reservation_net_unused_amortized_upfront_fee_for_billing_period",
    ).fill_null(0) + _with_net(
        names, "reservation_unused_recurring_fee", "reservation_net_unused_recurring_fee"
    ).fill_null(0)
    return (
        pl.when(line_type == "SavingsPlanCoveredUsage").then(sp_effective)
        .when(line_type == "SavingsPlanRecurringFee").then(sp_unused)
        .when(line_type.is_in(["SavingsPlanNegation", "SavingsPlanUpfrontFee"])).then(zero)
        .when(line_type == "DiscountedUsage").then(ri_effective)
        .when(line_type == "RIFee").then(ri_unused)
        .when((line_type == "Fee") & has_reservation).then(zero)
        .when((line_type == "Refund") & (_column(names, "line_item_product_code") == "ComputeSavingsPlans").fill_null(False)).then(zero)
        .otherwise(pl.col("BilledCost"))
    )


def _charge_category(names: set[str]) -> pl.Expr:
    """FOCUS ChargeCategory; a refund keeps the category of what it refunds (FOCUS 1.2): tax
    (the line has a tax type), a commitment purchase (Savings Plan product or a reservation), or
    usage."""
    line_type = pl.col("line_item_line_item_type")
    refunded_purchase = (_column(names, "line_item_product_code") == "ComputeSavingsPlans").fill_null(False) | blank_to_null(
        _column(names, "reservation_reservation_a_r_n")
    ).is_not_null()
    refunded_tax = blank_to_null(_column(names, "line_item_tax_type")).is_not_null()
    return (
        pl.when(line_type == "Refund")
        .then(
            pl.when(refunded_tax).then(pl.lit("Tax"))
            .when(refunded_purchase).then(pl.lit("Purchase"))
            .otherwise(pl.lit("Usage"))
        )
        .otherwise(line_type.replace_strict(CHARGE_CATEGORY, default="Adjustment", return_dtype=pl.String))
    )


def _pricing_category(names: set[str]) -> pl.Expr:
    """FOCUS PricingCategory of usage lines: commitment-covered usage `Committed`, spot `Dynamic`,
    on-demand `Standard`; NULL on lines without a price term (tax, credits, fees without one)."""
    line_type = pl.col("line_item_line_item_type")
    term = blank_to_null(_column(names, "pricing_term"))
    is_spot = (term == "Spot") | blank_to_null(_column(names, "line_item_usage_type")).str.contains("SpotUsage")
    return (
        pl.when(line_type.is_in(["SavingsPlanCoveredUsage", "DiscountedUsage"])).then(pl.lit("Committed"))
        .when(is_spot.fill_null(False)).then(pl.lit("Dynamic"))
        .otherwise(term.replace_strict(PRICING_CATEGORY, default=None, return_dtype=pl.String))
    )


def _tags(names: set[str]) -> pl.Expr:
    """resource_tags as key/value entries, keys as AWS spells them; empty values dropped."""
    if "resource_tags" not in names:
        return pl.lit([], dtype=pl.List(pl.Struct({"key": pl.String, "value": pl.String})))
    return pl.col("resource_tags").fill_null([]).list.eval(
        pl.element().filter(pl.element().struct.field("value").fill_null("").str.strip_chars() != "")
    )


def _map_value(names: set[str], map_column: str, key: str) -> pl.Expr:
    if map_column not in names:
        return pl.lit(None, dtype=pl.String)
    return (
        pl.col(map_column)
        .list.eval(pl.element().filter(pl.element().struct.field("key") == key).struct.field("value"))
        .list.first()
    )


def normalize_cur2(
    frame: pl.LazyFrame,
    *,
    source_name: str,
    billing_period: date,
    execution_id: str,
    category_rules: list[CategoryRule],
    ingested_at: object,
    source_format: str = "aws_cur2",
    first_row: int = 0,
) -> pl.LazyFrame:
    """Maps a CUR 2.0 delivery (or a legacy CUR one renamed to its columns), or one file of it,
    onto FOCUS columns.

    Args:
        frame: from `scan_cur2`, or one frame of `scan_cur2_files`.
        source_name: the configured source name (x_SourceName).
        billing_period: first day of the period; rows of other periods are an error upstream.
        execution_id: the manifest's executionId, part of the stable x_LineItemKey.
        category_rules: cost category mapping rules.
        ingested_at: x_IngestedAt.
        source_format: x_SourceFormat (`aws_cur2`, `aws_legacy_csv`, `aws_legacy_parquet`).
        first_row: the delivery's row number of the frame's first row (the rows of the files
            before it), so x_LineItemKey is the same whether the files are mapped together or
            one by one.
    """
    names = set(frame.collect_schema().names())
    line_type = pl.col("line_item_line_item_type")
    usage_amount = money(_column(names, "line_item_usage_amount", pl.Float64))
    instance_type = blank_to_null(_column(names, "product_instance_type"))
    if "product" in names:
        instance_type = pl.coalesce(instance_type, _map_value(names, "product", "instance_type"))
    service_code = pl.coalesce(
        blank_to_null(_column(names, "line_item_product_code")), blank_to_null(_column(names, "product_servicecode"))
    )
    sp_arn = blank_to_null(_column(names, "savings_plan_savings_plan_a_r_n"))
    ri_arn = blank_to_null(_column(names, "reservation_reservation_a_r_n"))
    is_instance_usage = line_type.is_in(USAGE_TYPES) & pl.col("_detail").fill_null("").str.contains(
        "(?i)(BoxUsage|DedicatedUsage|HeavyUsage|SpotUsage)"
    )

    mapped = frame.with_row_index("_row", offset=first_row).with_columns(
        _column(names, "bill_payer_account_id").cast(pl.String).alias("BillingAccountId"),
        _column(names, "bill_payer_account_name").alias("BillingAccountName"),
        pl.col("line_item_currency_code").alias("BillingCurrency"),
        pl.col("bill_billing_period_start_date").cast(pl.Datetime("us")).alias("BillingPeriodStart"),
        _column(names, "bill_billing_period_end_date", pl.Datetime("us")).cast(pl.Datetime("us")).alias("BillingPeriodEnd"),
        pl.col("line_item_usage_start_date").cast(pl.Datetime("us")).alias("ChargePeriodStart"),
        pl.col("line_item_usage_end_date").cast(pl.Datetime("us")).alias("ChargePeriodEnd"),
        _charge_category(names).alias("ChargeCategory"),
        blank_to_null(_column(names, "line_item_line_item_description")).alias("ChargeDescription"),
        line_type.replace_strict(CHARGE_FREQUENCY, default="Usage-Based", return_dtype=pl.String).alias("ChargeFrequency"),
        pl.lit(PROVIDER).alias("ProviderName"),
        pl.when(_column(names, "bill_billing_entity") == "AWS Marketplace")
        .then(pl.lit("AWS Marketplace")).otherwise(pl.lit(PROVIDER)).alias("PublisherName"),
        blank_to_null(_column(names, "bill_invoicing_entity")).alias("InvoiceIssuerName"),
        blank_to_null(_column(names, "bill_invoice_id")).alias("InvoiceId"),
        pl.coalesce(
            _map_value(names, "product", "product_name"), blank_to_null(_column(names, "product_product_name")), service_code
        ).alias("ServiceName"),
        service_code.alias("_service_key"),
        blank_to_null(_column(names, "line_item_usage_type")).alias("_detail"),
        _column(names, "line_item_usage_account_id").cast(pl.String).alias("SubAccountId"),
        _column(names, "line_item_usage_account_name").alias("SubAccountName"),
        pl.coalesce(
            blank_to_null(_column(names, "product_region_code")), blank_to_null(_column(names, "product_region"))
        ).alias("RegionId"),
        blank_to_null(_column(names, "line_item_availability_zone")).alias("AvailabilityZone"),
        blank_to_null(_column(names, "line_item_resource_id")).alias("ResourceId"),
        blank_to_null(_column(names, "product_sku")).alias("SkuId"),
        blank_to_null(_column(names, "pricing_rate_id")).alias("SkuPriceId"),
        _pricing_category(names).alias("PricingCategory"),
        usage_amount.alias("PricingQuantity"),
        blank_to_null(_column(names, "pricing_unit")).alias("PricingUnit"),
        pl.when(line_type.is_in(USAGE_TYPES)).then(usage_amount).alias("ConsumedQuantity"),
        pl.when(line_type.is_in(USAGE_TYPES)).then(blank_to_null(_column(names, "pricing_unit"))).alias("ConsumedUnit"),
        money(_column(names, "pricing_public_on_demand_rate")).alias("ListUnitPrice"),
        pl.when(line_type == "SavingsPlanNegation").then(None)
        .otherwise(money(_column(names, "pricing_public_on_demand_cost", pl.Float64))).alias("ListCost"),
        money("line_item_unblended_cost").alias("ContractedCost"),
        _billed_cost(frame).alias("BilledCost"),
        pl.coalesce(sp_arn, ri_arn).alias("CommitmentDiscountId"),
        pl.when(sp_arn.is_not_null()).then(pl.lit("Savings Plan"))
        .when(ri_arn.is_not_null()).then(pl.lit("Reservation")).alias("CommitmentDiscountType"),
        pl.when(line_type.is_in(["SavingsPlanCoveredUsage", "DiscountedUsage"])).then(pl.lit("Used")).alias("CommitmentDiscountStatus"),
        _tags(names).alias("Tags"),
        pl.format("{}|{}|{}|{}", pl.lit(source_name), pl.lit(f"{billing_period:%Y-%m}"), pl.lit(execution_id), pl.col("_row")).alias("x_LineItemKey"),
        pl.lit(source_name).alias("x_SourceName"),
        pl.lit(source_format).alias("x_SourceFormat"),
        pl.col("_source_file").alias("x_SourceFile"),
        pl.lit(ingested_at).cast(pl.Datetime("us")).alias("x_IngestedAt"),
        instance_type.alias("x_InstanceType"),
        pl.lit(None, dtype=pl.String).alias("ServiceCategory"),
    )
    categorized = mapped.with_columns(
        _effective_cost(names).alias("EffectiveCost"),
        # A line for usage before its billing period corrects an already-invoiced period.
        pl.when(pl.col("ChargePeriodStart") < pl.col("BillingPeriodStart")).then(pl.lit("Correction")).alias("ChargeClass"),
        cost_category_expr(category_rules).alias("x_CostCategory"),
    ).with_columns(
        pl.coalesce(
            pl.col("_service_key").replace_strict(aws_service_categories(), default=None, return_dtype=pl.String),
            service_category_from_cost_category(),
        ).alias("ServiceCategory")
    )
    with_gpus = with_gpu_count(categorized)
    return to_focus_columns(
        with_gpus.with_columns(
            pl.when(is_instance_usage & pl.col("x_GpuCount").is_not_null())
            .then((pl.col("ConsumedQuantity") * pl.col("x_GpuCount").cast(pl.Decimal(38, 0))).cast(MONEY))
            .otherwise(pl.lit(0, dtype=MONEY))
            .alias("x_GpuHours")
        )
    )
