"""The GCP Cloud Billing export (BigQuery schema) onto FOCUS 1.2, lazily.

Net cost = cost + Σ credits.amount is both BilledCost and EffectiveCost. The billing period is
`invoice.month`, a Pacific-time month: BillingPeriodStart is its first midnight in
America/Los_Angeles, stored in UTC. Tags are `labels`, then `project.labels` for keys the
resource does not set; `system_labels` stay out of Tags.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date
from pathlib import Path

import polars as pl

from connectors.errors import SourceError
from pipelines.ingest.focus_schema import MONEY, TAGS, blank_to_null, money, service_category_from_cost_category, to_focus_columns
from pipelines.ingest.mappings import CategoryRule, cost_category_expr, with_gpu_count

PROVIDER = "Google Cloud"
BILLING_TIME_ZONE = "America/Los_Angeles"
MACHINE_SPEC_LABEL = "compute.googleapis.com/machine_spec"
KEY_VALUE = pl.List(pl.Struct({"key": pl.String, "value": pl.String}))
EXPORT_SCHEMA = {
    "billing_account_id": pl.String,
    "service": pl.Struct({"id": pl.String, "description": pl.String}),
    "sku": pl.Struct({"id": pl.String, "description": pl.String}),
    "usage_start_time": pl.String,
    "usage_end_time": pl.String,
    "project": pl.Struct({"id": pl.String, "number": pl.String, "name": pl.String, "labels": KEY_VALUE}),
    "labels": KEY_VALUE,
    "system_labels": KEY_VALUE,
    "location": pl.Struct({"location": pl.String, "country": pl.String, "region": pl.String, "zone": pl.String}),
    "resource": pl.Struct({"name": pl.String, "global_name": pl.String}),
    "export_time": pl.String,
    "cost": pl.String,
    "currency": pl.String,
    "usage": pl.Struct({"amount": pl.String, "unit": pl.String, "amount_in_pricing_units": pl.String, "pricing_unit": pl.String}),
    "credits": pl.List(pl.Struct({"name": pl.String, "amount": pl.String, "full_name": pl.String, "id": pl.String, "type": pl.String})),
    "invoice": pl.Struct({"month": pl.String}),
    "cost_type": pl.String,
    "cost_at_list": pl.String,
    "seller_name": pl.String,
}
CHARGE_CATEGORY = {"regular": "Usage", "tax": "Tax", "adjustment": "Adjustment", "rounding_error": "Adjustment"}


def scan_export(files: Sequence[Path]) -> pl.LazyFrame:
    """The export files (NDJSON with the BigQuery schema, or Parquet) as one lazy frame.

    Numbers are read as text so money converts exactly; every file keeps its own row numbers,
    so a row's key does not change when new files arrive.
    """
    frames = []
    for file in files:
        try:
            if file.name.lower().endswith(".parquet"):
                parquet = pl.scan_parquet(file)
                present = parquet.collect_schema().names()
                frame = parquet.select(
                    [pl.col(n).cast(t) if n in present else pl.lit(None, dtype=t).alias(n) for n, t in EXPORT_SCHEMA.items()]
                )
            else:
                frame = pl.scan_ndjson(file, schema=EXPORT_SCHEMA)
        except (pl.exceptions.PolarsError, OSError) as error:
            raise SourceError(f"cannot read GCP billing export file {file}: {error}") from None
        frames.append(frame.with_row_index("_row").with_columns(pl.lit(str(file)).alias("_source_file")))
    return pl.concat(frames)


def billing_period_expr() -> pl.Expr:
    """The first day of the invoice month of each raw row."""
    return pl.col("invoice").struct.field("month").str.to_date("%Y%m")


def _credits_total() -> pl.Expr:
    return (
        pl.col("credits").fill_null([])
        .list.eval(money(pl.element().struct.field("amount")))
        .list.sum()
        .cast(MONEY)
    )


def _timestamp(column: str) -> pl.Expr:
    text = pl.col(column).str.replace(r"(?i)\s*(UTC|Z)$", "").str.replace("T", " ")
    return text.str.to_datetime(time_unit="us", strict=True)


def _pacific_month_start(month_start: pl.Expr) -> pl.Expr:
    return (
        month_start.cast(pl.Datetime("us"))
        .dt.replace_time_zone(BILLING_TIME_ZONE)
        .dt.convert_time_zone("UTC")
        .dt.replace_time_zone(None)
    )


def _label(labels: str, key: str) -> pl.Expr:
    return (
        pl.col(labels).fill_null([])
        .list.eval(pl.element().filter(pl.element().struct.field("key") == key).struct.field("value"))
        .list.first()
    )


def _tags() -> pl.Expr:
    own = pl.col("labels").fill_null([])
    project = pl.col("project").struct.field("labels").fill_null([])
    return pl.concat_list(own, project).list.eval(
        pl.element().filter(pl.element().struct.field("key").is_first_distinct())
    ).cast(TAGS)


def raw_control_totals(frame: pl.LazyFrame, billing_period: date) -> tuple[int, object]:
    """Rows and Σ cost + Σ credits of one invoice month, each summed separately from the raw rows."""
    period = frame.filter(billing_period_expr() == billing_period)
    costs = period.select(pl.len().alias("rows"), money(pl.col("cost")).sum().alias("cost")).collect()
    credits = (
        period.select(pl.col("credits").fill_null([]))
        .explode("credits", empty_as_null=True)
        .select(money(pl.col("credits").struct.field("amount")).sum().alias("credits"))
        .collect()
    )
    return int(costs["rows"][0]), costs["cost"][0] + (credits["credits"][0] or 0)


def normalize_gcp(
    frame: pl.LazyFrame,
    *,
    source_name: str,
    category_rules: list[CategoryRule],
    ingested_at: object,
) -> pl.LazyFrame:
    """Maps GCP billing export rows onto the FOCUS columns (all invoice months)."""
    usage = pl.col("usage")
    month_start = billing_period_expr()
    net_cost = (money(pl.col("cost")) + _credits_total()).cast(MONEY)
    mapped = frame.with_columns(
        pl.col("billing_account_id").alias("BillingAccountId"),
        pl.col("currency").alias("BillingCurrency"),
        _pacific_month_start(month_start).alias("BillingPeriodStart"),
        _pacific_month_start(month_start.dt.offset_by("1mo")).alias("BillingPeriodEnd"),
        _timestamp("usage_start_time").alias("ChargePeriodStart"),
        _timestamp("usage_end_time").alias("ChargePeriodEnd"),
        pl.col("cost_type").fill_null("regular").replace_strict(CHARGE_CATEGORY, default="Adjustment", return_dtype=pl.String).alias("ChargeCategory"),
        pl.col("sku").struct.field("description").alias("ChargeDescription"),
        pl.when(pl.col("cost_type") == "tax").then(pl.lit("One-Time")).otherwise(pl.lit("Usage-Based")).alias("ChargeFrequency"),
        pl.lit(PROVIDER).alias("ProviderName"),
        pl.coalesce(blank_to_null(pl.col("seller_name")), pl.lit("Google")).alias("PublisherName"),
        pl.lit("Google").alias("InvoiceIssuerName"),
        pl.col("service").struct.field("description").alias("ServiceName"),
        pl.col("service").struct.field("description").alias("_service_key"),
        pl.col("sku").struct.field("description").alias("_detail"),
        pl.col("project").struct.field("id").alias("SubAccountId"),
        pl.col("project").struct.field("name").alias("SubAccountName"),
        blank_to_null(pl.col("location").struct.field("region")).alias("RegionId"),
        blank_to_null(pl.col("location").struct.field("zone")).alias("AvailabilityZone"),
        pl.coalesce(
            blank_to_null(pl.col("resource").struct.field("global_name")),
            blank_to_null(pl.col("resource").struct.field("name")),
        ).alias("ResourceId"),
        blank_to_null(pl.col("resource").struct.field("name")).alias("ResourceName"),
        pl.col("sku").struct.field("id").alias("SkuId"),
        money(usage.struct.field("amount_in_pricing_units")).alias("PricingQuantity"),
        usage.struct.field("pricing_unit").alias("PricingUnit"),
        money(usage.struct.field("amount")).alias("ConsumedQuantity"),
        usage.struct.field("unit").alias("ConsumedUnit"),
        money(pl.col("cost_at_list")).alias("ListCost"),
        money(pl.col("cost")).alias("ContractedCost"),
        net_cost.alias("BilledCost"),
        net_cost.alias("EffectiveCost"),
        _tags().alias("Tags"),
        pl.format("{}|{}|{}", pl.lit(source_name), pl.col("_source_file"), pl.col("_row")).alias("x_LineItemKey"),
        pl.lit(source_name).alias("x_SourceName"),
        pl.lit("gcp_billing").alias("x_SourceFormat"),
        pl.col("_source_file").alias("x_SourceFile"),
        pl.lit(ingested_at).cast(pl.Datetime("us")).alias("x_IngestedAt"),
        _label("system_labels", MACHINE_SPEC_LABEL).alias("x_InstanceType"),
        pl.lit(None, dtype=pl.String).alias("ServiceCategory"),
    )
    is_gpu_hours = pl.col("_detail").fill_null("").str.contains("(?i)GPU") & (
        pl.col("PricingUnit").fill_null("").str.to_lowercase() == "hour"
    )
    categorized = mapped.with_columns(cost_category_expr(category_rules).alias("x_CostCategory"))

    with_category = categorized.with_columns(service_category_from_cost_category().alias("ServiceCategory"))
    return to_focus_columns(
        with_gpu_count(with_category).with_columns(
            pl.when(is_gpu_hours).then(pl.col("PricingQuantity")).otherwise(pl.lit(0, dtype=MONEY)).alias("x_GpuHours")
        )
    )
