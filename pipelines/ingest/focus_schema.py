"""The `focus_line_items` columns as polars types, and the conversion of money to DECIMAL.

`money()` is where a number of a polars-mapped format (GCP, FOCUS, legacy CUR) becomes
DECIMAL(38,10): normalization and the raw control totals both use it, so conservation is checked
on identical conversions. A number is taken as the provider wrote it (a float by its shortest
text form, so 0.1 stays 0.1) and rounded half-to-even at the 10th decimal; FOCUS files carry up
to 11 decimals on some lines. CUR 2.0 is mapped in SQL (`cur2_money`, README "Money conversion").
"""

from __future__ import annotations

import polars as pl

MONEY = pl.Decimal(38, 10)
MONEY_SCALE = 10
WIDE_DECIMAL = pl.Decimal(38, 20)
TAGS = pl.List(pl.Struct({"key": pl.String, "value": pl.String}))
TIMESTAMP = pl.Datetime("us")

FOCUS_COLUMNS: dict[str, pl.DataType] = {
    "BillingAccountId": pl.String,
    "BillingAccountName": pl.String,
    "BillingCurrency": pl.String,
    "BillingPeriodStart": TIMESTAMP,
    "BillingPeriodEnd": TIMESTAMP,
    "ChargePeriodStart": TIMESTAMP,
    "ChargePeriodEnd": TIMESTAMP,
    "ChargeCategory": pl.String,
    "ChargeClass": pl.String,
    "ChargeDescription": pl.String,
    "ChargeFrequency": pl.String,
    "ProviderName": pl.String,
    "PublisherName": pl.String,
    "InvoiceIssuerName": pl.String,
    "InvoiceId": pl.String,
    "ServiceName": pl.String,
    "ServiceCategory": pl.String,
    "SubAccountId": pl.String,
    "SubAccountName": pl.String,
    "RegionId": pl.String,
    "AvailabilityZone": pl.String,
    "ResourceId": pl.String,
    "ResourceName": pl.String,
    "ResourceType": pl.String,
    "SkuId": pl.String,
    "SkuPriceId": pl.String,
    "PricingCategory": pl.String,
    "PricingQuantity": MONEY,
    "PricingUnit": pl.String,
    "ConsumedQuantity": MONEY,
    "ConsumedUnit": pl.String,
    "ListUnitPrice": MONEY,
    "ListCost": MONEY,
    "ContractedCost": MONEY,
    "EffectiveCost": MONEY,
    "BilledCost": MONEY,
    "CommitmentDiscountId": pl.String,
    "CommitmentDiscountType": pl.String,
    "CommitmentDiscountStatus": pl.String,
    "Tags": TAGS,
    "x_LineItemKey": pl.String,
    "x_SourceName": pl.String,
    "x_SourceFormat": pl.String,
    "x_SourceFile": pl.String,
    "x_IngestedAt": TIMESTAMP,
    "x_CostCategory": pl.String,
    "x_InstanceType": pl.String,
    "x_GpuCount": pl.Int32,
    "x_GpuHours": MONEY,
    "x_Credits": pl.List(pl.Struct({"key": pl.String, "value": MONEY})),
    "x_CurrencyConversionRate": MONEY,
    "x_SystemLabels": TAGS,
}

SERVICE_CATEGORY_OF_COST_CATEGORY = {
    "compute": "Compute",
    "storage": "Storage",
    "network": "Networking",
    "data": "Analytics",
    "monitoring": "Management and Governance",
}


def money(column: str | pl.Expr) -> pl.Expr:
    """A provider number (float, integer or decimal text) as DECIMAL(38,10), rounded half to
    even; blank text is NULL."""
    expr = pl.col(column) if isinstance(column, str) else column
    return blank_to_null(expr).cast(WIDE_DECIMAL).round(MONEY_SCALE).cast(MONEY)


def blank_to_null(expr: pl.Expr) -> pl.Expr:
    """FOCUS nulls are NULL, never empty strings."""
    stripped = expr.cast(pl.String).str.strip_chars()
    return pl.when(stripped == "").then(None).otherwise(stripped)


def service_category_from_cost_category() -> pl.Expr:
    """A FOCUS ServiceCategory for providers whose exports do not carry one."""
    return pl.col("x_CostCategory").replace_strict(
        SERVICE_CATEGORY_OF_COST_CATEGORY, default="Other", return_dtype=pl.String
    )


def to_focus_columns(frame: pl.LazyFrame) -> pl.LazyFrame:
    """Selects exactly the `focus_line_items` columns, in order, with their types."""
    present = set(frame.collect_schema().names())
    return frame.select(
        [
            pl.col(name).cast(dtype) if name in present else pl.lit(None, dtype=dtype).alias(name)
            for name, dtype in FOCUS_COLUMNS.items()
        ]
    )
