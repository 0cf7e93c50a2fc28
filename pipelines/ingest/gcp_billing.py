"""The GCP Cloud Billing export (BigQuery schema) onto FOCUS 1.2, lazily.

Net cost = cost + Σ credits.amount is both BilledCost and EffectiveCost; the credits are also
kept per credit type in `x_Credits`. The billing period is `invoice.month`, a Pacific-time month:
BillingPeriodStart is its first midnight in America/Los_Angeles, stored in UTC. Tags are
`labels`, then `project.labels` for keys the resource does not set; `system_labels` stay out of
Tags, in `x_SystemLabels`. Amounts stay in the row's currency (`currency_conversion_rate` is kept
in `x_CurrencyConversionRate`, never applied).

The same mapping reads every shape of the export: NDJSON (numbers may be strings, timestamps like
`2026-10-07 00:00:00 UTC`), Parquet, and BigQuery query results (Arrow types); fields an older
table does not have are NULL.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date
from pathlib import Path

import polars as pl

from connectors.errors import SourceError
from pipelines.ingest.focus_schema import (
    MONEY,
    TAGS,
    TIMESTAMP,
    WIDE_DECIMAL,
    blank_to_null,
    money,
    service_category_from_cost_category,
    to_focus_columns,
)
from pipelines.ingest.mappings import CategoryRule, cost_category_expr, with_gpu_count

PROVIDER = "Google Cloud"
BILLING_TIME_ZONE = "America/Los_Angeles"
MACHINE_SPEC_LABEL = "compute.googleapis.com/machine_spec"
SECONDS_PER_HOUR = 3600
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
    "currency_conversion_rate": pl.String,
    "usage": pl.Struct(
        {"amount": pl.String, "unit": pl.String, "amount_in_pricing_units": pl.String, "pricing_unit": pl.String}
    ),
    "credits": pl.List(
        pl.Struct({"name": pl.String, "amount": pl.String, "full_name": pl.String, "id": pl.String, "type": pl.String})
    ),
    "invoice": pl.Struct({"month": pl.String}),
    "cost_type": pl.String,
    "adjustment_info": pl.Struct({"id": pl.String, "description": pl.String, "mode": pl.String, "type": pl.String}),
    "cost_at_list": pl.String,
    "seller_name": pl.String,
}
TIMESTAMP_COLUMNS = ("usage_start_time", "usage_end_time", "export_time")
CHARGE_CATEGORY = {"regular": "Usage", "tax": "Tax", "adjustment": "Adjustment", "rounding_error": "Adjustment"}
# adjustment_info values that restate usage already billed (FOCUS ChargeClass `Correction`);
# goodwill, SLA and other general adjustments are new charges, not corrections.
CORRECTION_TYPES = ("USAGE_CORRECTION", "PRICE_CORRECTION", "METADATA_CORRECTION")
CORRECTION_MODES = ("PARTIAL_CORRECTION", "COMPLETE_NEGATION", "COMPLETE_NEGATION_WITH_REMONETIZATION")
CREDITS = pl.List(pl.Struct({"key": pl.String, "value": MONEY}))


def _conformed(expr: pl.Expr, present: pl.DataType | None, target: pl.DataType) -> pl.Expr:
    """`expr` (of type `present`, None when missing) as `target`, field by field for structs."""
    if present is None or present == pl.Null:
        return pl.lit(None, dtype=target)
    if isinstance(target, pl.Struct):
        if not isinstance(present, pl.Struct):
            raise SourceError(f"expected a record, found {present}")
        fields = {field.name: field.dtype for field in present.fields}
        return pl.struct(
            [_conformed(expr.struct.field(f.name), fields.get(f.name), f.dtype).alias(f.name) for f in target.fields]
        )
    if isinstance(target, pl.List):
        if not isinstance(present, pl.List | pl.Array):
            raise SourceError(f"expected a repeated field, found {present}")
        return expr.list.eval(_conformed(pl.element(), present.inner, target.inner))
    return expr.cast(target)


def _utc_timestamp(column: str, present: pl.DataType | None) -> pl.Expr:
    if present is None:
        return pl.lit(None, dtype=TIMESTAMP)
    if isinstance(present, pl.Datetime):
        moment = pl.col(column)
        if present.time_zone is not None:
            moment = moment.dt.convert_time_zone("UTC").dt.replace_time_zone(None)
        return moment.cast(TIMESTAMP)
    text = pl.col(column).cast(pl.String).str.replace(r"(?i)\s*(UTC|Z|\+00:?00)$", "").str.replace("T", " ")
    return text.str.to_datetime(time_unit="us", strict=True)


def conform(frame: pl.LazyFrame, where: str) -> pl.LazyFrame:
    """Export rows of any shape (text, Parquet or Arrow types; missing fields) as EXPORT_SCHEMA,
    with the timestamp columns parsed to UTC.

    Raises:
        SourceError: naming `where` when a column has a shape the export never has.
    """
    present = dict(frame.collect_schema())
    try:
        columns = [
            _utc_timestamp(name, present.get(name)).alias(name)
            if name in TIMESTAMP_COLUMNS
            else _conformed(pl.col(name), present.get(name), dtype).alias(name)
            for name, dtype in EXPORT_SCHEMA.items()
        ]
    except SourceError as error:
        raise SourceError(f"{where}: {error}") from None
    return frame.select(columns)


def scan_export(files: Sequence[Path]) -> pl.LazyFrame:
    """The export files (NDJSON with the BigQuery schema, or Parquet) as one lazy frame.

    Numbers are read as text so money converts exactly; every file keeps its own row numbers,
    so a row's key (`file|row`) does not change when new files arrive.
    """
    frames = []
    for file in files:
        try:
            if file.name.lower().endswith(".parquet"):
                frame = conform(pl.scan_parquet(file), str(file))
            else:
                frame = conform(pl.scan_ndjson(file, schema=EXPORT_SCHEMA), str(file))
        except (pl.exceptions.PolarsError, OSError) as error:
            raise SourceError(f"cannot read GCP billing export file {file}: {error}") from None
        frames.append(
            frame.with_row_index("_row")
            .with_columns(
                pl.lit(str(file)).alias("_source_file"),
                pl.format("{}|{}", pl.lit(str(file)), pl.col("_row")).alias("_line_key"),
            )
            .drop("_row")
        )
    return pl.concat(frames)


def scan_snapshot(file: Path, table: str) -> pl.LazyFrame:
    """Rows of a BigQuery snapshot saved as Parquet, keyed by their content.

    A query returns rows in no stable order and the export has no row id, so a row's key is a
    hash of all its fields plus its position among identical rows: re-reading the same rows
    gives the same keys.
    """
    frame = conform(pl.scan_parquet(file), table)
    content = pl.struct(list(EXPORT_SCHEMA)).hash(seed=0)
    return (
        frame.with_columns(content.alias("_content_hash"))
        .with_columns(
            pl.lit(table).alias("_source_file"),
            pl.format(
                "{}|{}|{}",
                pl.lit(table),
                pl.col("_content_hash"),
                pl.int_range(pl.len(), dtype=pl.UInt32).over("_content_hash"),
            ).alias("_line_key"),
        )
        .drop("_content_hash")
    )


def billing_period_expr() -> pl.Expr:
    """The first day of the invoice month of each raw row."""
    return pl.col("invoice").struct.field("month").str.to_date("%Y%m")


def _credits_total() -> pl.Expr:
    return pl.col("credits").fill_null([]).list.eval(money(pl.element().struct.field("amount"))).list.sum().cast(MONEY)


def _credits_by_type(frame: pl.LazyFrame) -> pl.LazyFrame:
    """`_line_key` and x_Credits: Σ credit amounts per credit type (name when a table has no type)."""
    credit = pl.col("credits")
    return (
        frame.select("_line_key", pl.col("credits").fill_null([]))
        .explode("credits", empty_as_null=False)
        .select(
            "_line_key",
            pl.coalesce(
                blank_to_null(credit.struct.field("type")),
                blank_to_null(credit.struct.field("name")),
                pl.lit("UNKNOWN"),
            ).alias("key"),
            money(credit.struct.field("amount")).alias("value"),
        )
        .group_by("_line_key", "key")
        .agg(pl.col("value").sum().cast(MONEY))
        .sort("_line_key", "key")
        .group_by("_line_key", maintain_order=True)
        .agg(pl.struct("key", "value").alias("x_Credits"))
    )


def _pacific_month_start(month_start: pl.Expr) -> pl.Expr:
    return (
        month_start.cast(pl.Datetime("us"))
        .dt.replace_time_zone(BILLING_TIME_ZONE)
        .dt.convert_time_zone("UTC")
        .dt.replace_time_zone(None)
    )


def _label(labels: str, key: str) -> pl.Expr:
    return (
        pl.col(labels)
        .fill_null([])
        .list.eval(pl.element().filter(pl.element().struct.field("key") == key).struct.field("value"))
        .list.first()
    )


def _first_per_key(labels: pl.Expr) -> pl.Expr:
    return labels.list.eval(pl.element().filter(pl.element().struct.field("key").is_first_distinct())).cast(TAGS)


def _tags() -> pl.Expr:
    own = pl.col("labels").fill_null([])
    project = pl.col("project").struct.field("labels").fill_null([])
    return _first_per_key(pl.concat_list(own, project))


def _charge_class() -> pl.Expr:
    info = pl.col("adjustment_info")
    is_correction = info.struct.field("type").is_in(CORRECTION_TYPES) | info.struct.field("mode").is_in(
        CORRECTION_MODES
    )
    return pl.when(is_correction.fill_null(False)).then(pl.lit("Correction")).otherwise(pl.lit(None, dtype=pl.String))


def _gpu_hours() -> pl.Expr:
    """Hours of GPU SKUs' usage (billed in seconds); the VM's core and memory SKUs carry none."""
    sku = pl.col("sku").struct.field("description").fill_null("")
    usage = pl.col("usage")
    is_gpu_usage = (
        sku.str.contains(r"(?i)\bGPU\b")
        & ~sku.str.contains(r"(?i)^commitment")
        & (usage.struct.field("unit").fill_null("").str.to_lowercase() == "seconds")
        & (pl.col("cost_type").fill_null("regular") == "regular")
    )
    hours = (money(usage.struct.field("amount")) / SECONDS_PER_HOUR).cast(MONEY)
    return pl.when(is_gpu_usage).then(hours.fill_null(0)).otherwise(pl.lit(0, dtype=MONEY))


def raw_control_totals(frame: pl.LazyFrame, billing_period: date, where: str) -> tuple[int, object]:
    """Rows and Σ cost + Σ credits of one invoice month, each summed separately from the raw rows.

    Args:
        frame: rows from `scan_export` or `scan_snapshot`.
        billing_period: the first day of the invoice month.
        where: the files or table, named in errors.

    Raises:
        SourceError: naming the row and value of a cost that is empty or an amount that is not a
            number DECIMAL(38,10) can hold, or `where` for any other value that does not convert.
    """
    period = frame.filter(billing_period_expr() == billing_period)
    try:
        costs = period.select(
            pl.len().alias("rows"),
            money(pl.col("cost")).sum().alias("cost"),
            money(pl.col("cost")).is_null().sum().alias("empty_costs"),
        ).collect()
        credits = (
            period.select(pl.col("credits").fill_null([]))
            .explode("credits", empty_as_null=True)
            .select(money(pl.col("credits").struct.field("amount")).sum().alias("credits"))
            .collect()
        )
    except pl.exceptions.PolarsError as error:
        raise _first_bad_amount(period) or SourceError(f"{where}: {str(error).strip().splitlines()[0][:300]}") from None
    if costs["empty_costs"][0]:
        raise _first_bad_amount(period) or SourceError(f"{where}: rows without a cost")
    return int(costs["rows"][0]), costs["cost"][0] + (credits["credits"][0] or 0)


def _first_bad_amount(frame: pl.LazyFrame) -> SourceError | None:
    """The error for the first row whose cost is empty or whose cost or credit amount does not
    convert to money."""

    def unconvertible(amount: pl.Expr) -> pl.Expr:
        return amount.is_not_null() & blank_to_null(amount).cast(WIDE_DECIMAL, strict=False).is_null()

    credit_amount = pl.element().struct.field("amount")
    checked = frame.select(
        "_source_file",
        "_line_key",
        pl.when(blank_to_null(pl.col("cost")).is_null())
        .then(pl.lit("an empty cost"))
        .when(unconvertible(pl.col("cost")))
        .then(pl.format("cost {} is not a number DECIMAL(38,10) can hold", pl.col("cost").str.slice(0, 40)))
        .alias("bad"),
        pl.col("credits")
        .list.eval(credit_amount.filter(unconvertible(credit_amount)))
        .list.first()
        .alias("bad_credit"),
    )
    first = (
        checked.with_columns(
            pl.coalesce(
                "bad",
                pl.format(
                    "credit amount {} is not a number DECIMAL(38,10) can hold", pl.col("bad_credit").str.slice(0, 40)
                ),
            ).alias("bad")
        )
        .filter(pl.col("bad").is_not_null())
        .head(1)
        .collect()
    )
    if first.is_empty():
        return None
    row = first.row(0, named=True)
    source, line_key, bad = row["_source_file"], row["_line_key"], row["bad"]
    # file exports key rows `file|row`; BigQuery snapshots `table|content hash|n`
    located = (
        f"{source}, line {int(line_key.rsplit('|', 1)[1]) + 1}"
        if line_key.count("|") == 1
        else f"{source}, row {line_key}"
    )
    return SourceError(f"{located}: {bad}; fix the export, nothing was loaded")


def normalize_gcp(
    frame: pl.LazyFrame,
    *,
    source_name: str,
    category_rules: list[CategoryRule],
    ingested_at: object,
) -> pl.LazyFrame:
    """Maps conformed GCP billing export rows (from `scan_export` or `scan_snapshot`) onto the
    FOCUS columns (all invoice months)."""
    usage = pl.col("usage")
    month_start = billing_period_expr()
    net_cost = (money(pl.col("cost")) + _credits_total()).cast(MONEY)
    mapped = frame.with_columns(
        pl.col("billing_account_id").alias("BillingAccountId"),
        pl.col("currency").alias("BillingCurrency"),
        _pacific_month_start(month_start).alias("BillingPeriodStart"),
        _pacific_month_start(month_start.dt.offset_by("1mo")).alias("BillingPeriodEnd"),
        pl.col("usage_start_time").alias("ChargePeriodStart"),
        pl.col("usage_end_time").alias("ChargePeriodEnd"),
        pl.col("cost_type")
        .fill_null("regular")
        .replace_strict(CHARGE_CATEGORY, default="Adjustment", return_dtype=pl.String)
        .alias("ChargeCategory"),
        _charge_class().alias("ChargeClass"),
        pl.col("sku").struct.field("description").alias("ChargeDescription"),
        pl.when(pl.col("cost_type") == "tax")
        .then(pl.lit("One-Time"))
        .otherwise(pl.lit("Usage-Based"))
        .alias("ChargeFrequency"),
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
        pl.format("{}|{}", pl.lit(source_name), pl.col("_line_key")).alias("x_LineItemKey"),
        pl.lit(source_name).alias("x_SourceName"),
        pl.lit("gcp_billing").alias("x_SourceFormat"),
        pl.col("_source_file").alias("x_SourceFile"),
        pl.lit(ingested_at).cast(pl.Datetime("us")).alias("x_IngestedAt"),
        _label("system_labels", MACHINE_SPEC_LABEL).alias("x_InstanceType"),
        _gpu_hours().alias("x_GpuHours"),
        _first_per_key(pl.col("system_labels").fill_null([])).alias("x_SystemLabels"),
        money(pl.col("currency_conversion_rate")).alias("x_CurrencyConversionRate"),
        pl.lit(None, dtype=pl.String).alias("ServiceCategory"),
    )
    with_credits = mapped.join(_credits_by_type(frame), on="_line_key", how="left", maintain_order="left").with_columns(
        pl.col("x_Credits").fill_null(pl.lit([], dtype=CREDITS))
    )
    categorized = with_credits.with_columns(cost_category_expr(category_rules).alias("x_CostCategory"))
    with_category = categorized.with_columns(service_category_from_cost_category().alias("ServiceCategory"))
    return to_focus_columns(with_gpu_count(with_category))
