"""FOCUS 1.0-1.2 exports (CSV or Parquet) onto the `focus_line_items` columns, lazily.

CSV is read as text (the literal `NULL` is NULL) so money converts from its decimal text
exactly; `Tags` may be a JSON object string (CSV) or a map (Parquet).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import polars as pl

from connectors.errors import SourceError, missing_columns_error
from pipelines.ingest.focus_schema import (
    FOCUS_COLUMNS,
    MONEY,
    TAGS,
    WIDE_DECIMAL,
    blank_to_null,
    money,
    to_focus_columns,
)
from pipelines.ingest.mappings import CategoryRule, cost_category_expr, with_gpu_count

REQUIRED_COLUMNS = (
    "BilledCost",
    "EffectiveCost",
    "BillingCurrency",
    "BillingPeriodStart",
    "ChargePeriodStart",
    "ProviderName",
)
CSV_NULLS = ["NULL", ""]
TAG_PAIR = r'"((?:[^"\\]|\\.)*)"\s*:\s*"((?:[^"\\]|\\.)*)"'
TIMESTAMP_TEXT = r"(?i)(Z|UTC|\+00:?00)$"
TIMESTAMP_FORMS = ("%Y-%m-%d %H:%M:%S%.f", "%Y-%m-%d %H:%M", "%Y-%m-%d")
TIMESTAMP_COLUMNS = ("BillingPeriodStart", "BillingPeriodEnd", "ChargePeriodStart", "ChargePeriodEnd")


def scan_focus(files: Sequence[Path]) -> pl.LazyFrame:
    """Every file of the export as one lazy frame with the file path of each row."""
    frames = []
    for file in files:
        name = file.name.lower()
        try:
            if name.endswith(".parquet"):
                frame = pl.scan_parquet(file)
            else:
                frame = pl.scan_csv(file, infer_schema=False, null_values=CSV_NULLS)
            schema_names = frame.collect_schema().names()
        except (pl.exceptions.PolarsError, OSError) as error:
            raise SourceError(f"cannot read FOCUS file {file}: {error}") from None
        missing = [c for c in REQUIRED_COLUMNS if c not in schema_names]
        if missing:
            raise missing_columns_error(file, "FOCUS", missing, schema_names)
        frames.append(frame.with_row_index("_row").with_columns(pl.lit(str(file)).alias("_source_file")))
    return pl.concat(frames, how="diagonal_relaxed")


def _as_money(schema: pl.Schema, name: str) -> pl.Expr:
    if name not in schema:
        return pl.lit(None, dtype=MONEY)
    return money(name)


def _timestamp_text(name: str) -> pl.Expr:
    return blank_to_null(pl.col(name)).str.replace(TIMESTAMP_TEXT, "").str.replace("T", " ")


def _parses_as_timestamp(name: str) -> pl.Expr:
    """NULL where the text is in none of the ISO 8601 forms FOCUS exports use."""
    text = _timestamp_text(name)
    return pl.coalesce(*[text.str.to_datetime(form, time_unit="us", strict=False) for form in TIMESTAMP_FORMS])


def _as_timestamp(schema: pl.Schema, name: str) -> pl.Expr:
    if name not in schema:
        return pl.lit(None, dtype=pl.Datetime("us"))
    if schema[name] == pl.String:
        return _timestamp_text(name).str.to_datetime(time_unit="us", strict=True)
    return (
        pl.col(name).cast(pl.Datetime("us", "UTC")).dt.replace_time_zone(None)
        if getattr(schema[name], "time_zone", None)
        else pl.col(name).cast(pl.Datetime("us"))
    )


def _tags(schema: pl.Schema) -> pl.Expr:
    if "Tags" not in schema:
        return pl.lit([], dtype=TAGS)
    if schema["Tags"] == pl.String:
        pairs = pl.col("Tags").fill_null("").str.extract_all(TAG_PAIR)
        return pairs.list.eval(
            pl.struct(
                pl.element().str.extract(TAG_PAIR, 1).alias("key"),
                pl.element().str.extract(TAG_PAIR, 2).alias("value"),
            )
        )
    return pl.col("Tags").fill_null([])


def normalize_focus(
    frame: pl.LazyFrame,
    *,
    source_name: str,
    category_rules: list[CategoryRule],
    ingested_at: object,
    source_format: str = "focus",
) -> pl.LazyFrame:
    """Types a FOCUS export's columns and adds the x_ extensions."""
    schema = frame.collect_schema()
    money_columns = [n for n, t in FOCUS_COLUMNS.items() if t == MONEY and not n.startswith("x_")]
    text_columns = [n for n, t in FOCUS_COLUMNS.items() if t == pl.String and not n.startswith("x_")]
    typed = frame.with_columns(
        *[_as_money(schema, n).alias(n) for n in money_columns],
        *[
            blank_to_null(pl.col(n)).alias(n) if n in schema else pl.lit(None, dtype=pl.String).alias(n)
            for n in text_columns
        ],
        *[_as_timestamp(schema, n).alias(n) for n in TIMESTAMP_COLUMNS],
        _tags(schema).alias("Tags"),
        pl.format("{}|{}|{}", pl.lit(source_name), pl.col("_source_file"), pl.col("_row")).alias("x_LineItemKey"),
        pl.lit(source_name).alias("x_SourceName"),
        pl.lit(source_format).alias("x_SourceFormat"),
        pl.col("_source_file").alias("x_SourceFile"),
        pl.lit(ingested_at).cast(pl.Datetime("us")).alias("x_IngestedAt"),
        (pl.col("x_InstanceType") if "x_InstanceType" in schema else pl.lit(None, dtype=pl.String)).alias(
            "x_InstanceType"
        ),
    )
    categorized = typed.with_columns(
        pl.col("ServiceName").alias("_service_key"),
        pl.col("ChargeDescription").alias("_detail"),
    ).with_columns(cost_category_expr(category_rules).alias("x_CostCategory"))
    return to_focus_columns(with_gpu_count(categorized).with_columns(pl.lit(0, dtype=MONEY).alias("x_GpuHours")))


def billing_period_expr(frame: pl.LazyFrame) -> pl.Expr:
    """The first day of each raw row's billing period."""
    return _as_timestamp(frame.collect_schema(), "BillingPeriodStart").dt.truncate("1mo").dt.date()


def check_values(frame: pl.LazyFrame) -> None:
    """Refuses the export if a money value is not a finite number or a timestamp is not one.

    Raises:
        SourceError: naming the file, the row (1-based, header not counted), the column and the
            value of the first bad value.
    """
    schema = frame.collect_schema()
    lenient = {
        **{
            n: blank_to_null(pl.col(n)).cast(WIDE_DECIMAL, strict=False)
            for n, t in FOCUS_COLUMNS.items()
            if t == MONEY and not n.startswith("x_") and n in schema
        },
        **{n: _parses_as_timestamp(n) for n in TIMESTAMP_COLUMNS if schema.get(n) == pl.String},
    }
    flags = [(pl.col(n).is_not_null() & expr.is_null()).alias(f"_bad_{n}") for n, expr in lenient.items()]
    first = frame.with_columns(flags).filter(pl.any_horizontal(pl.col(f"_bad_{n}") for n in lenient)).head(1).collect()
    if first.is_empty():
        return
    row = first.row(0, named=True)
    column = next(n for n in lenient if row[f"_bad_{n}"])
    kind = (
        "a finite number"
        if column not in TIMESTAMP_COLUMNS
        else "a timestamp YYYY-MM-DD HH:MM:SS (optionally with T and Z)"
    )
    raise SourceError(
        f"{row['_source_file']}, row {row['_row'] + 1}, column {column}: {str(row[column])!r} is not {kind}; "
        "fix or re-export the file, nothing was loaded"
    )


def raw_control_totals(frame: pl.LazyFrame, billing_period: object, files: Sequence[object]) -> tuple[int, object]:
    """Row count and Σ BilledCost of one period of the raw files, per the same money conversion.

    Args:
        frame: the files as `scan_focus` reads them.
        billing_period: the first day of the period.
        files: the files, named in errors.

    Raises:
        SourceError: a money or timestamp value does not convert (`check_values`), or a file is
            not a well-formed CSV/Parquet file.
    """
    schema = frame.collect_schema()
    try:
        check_values(frame)
        totals = (
            frame.filter(billing_period_expr(frame) == billing_period)
            .select(pl.len().alias("rows"), _as_money(schema, "BilledCost").sum().alias("billed"))
            .collect()
        )
    except pl.exceptions.PolarsError as error:
        raise SourceError(f"cannot read FOCUS files {', '.join(map(str, files))}: {error}") from None
    return int(totals["rows"][0]), totals["billed"][0]
