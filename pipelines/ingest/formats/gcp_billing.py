"""The GCP Cloud Billing export (BigQuery schema), read for DuckDB's mapping onto FOCUS 1.2
(`sql/staging/gcp_normalize.sql`, which documents the mapping).

DuckDB reads the export's Parquet as it is: export files, and BigQuery snapshots once their rows
are keyed (`key_snapshot`). NDJSON files are typed by polars first (`write_typed`): every field the
mapping reads, numbers as the text Google wrote (the mapping's `money` converts them exactly),
timestamps like `2026-10-07 00:00:00 UTC` parsed as UTC. Fields an older table does not have are
NULL.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date, datetime
from decimal import Decimal
from functools import cache
from pathlib import Path

import polars as pl

from connectors.errors import SourceError
from pipelines.ingest.formats.delivery import MappedDelivery, create_mapping, fetch_dict, memory_connection
from pipelines.ingest.mappings import CategoryRule
from pipelines.warehouse.sql import read_sql

TIMESTAMP_COLUMNS = ("usage_start_time", "usage_end_time", "export_time")
# Columns RunLedger adds to the export's: a keyed snapshot's row key, a typed NDJSON row's file and place.
ADDED_COLUMNS = ("_line_key", "_source_file", "_row")


@cache
def export_schema() -> pl.Schema:
    """The export's fields the mapping reads, typed as the mapping's template (`gcp_columns`)."""
    with memory_connection() as conn:
        conn.execute(read_sql("staging/macros"))
        conn.execute(read_sql("staging/gcp_normalize"))
        schema = conn.table("gcp_columns").pl().schema
    return pl.Schema({name: dtype for name, dtype in schema.items() if name not in ADDED_COLUMNS})


def _as_text(dtype: pl.DataType) -> pl.DataType:
    if isinstance(dtype, pl.Struct):
        return pl.Struct({field.name: _as_text(field.dtype) for field in dtype.fields})
    if isinstance(dtype, pl.List):
        return pl.List(_as_text(dtype.inner))
    return pl.String


@cache
def ndjson_schema() -> pl.Schema:
    """The export's fields the mapping reads, every value as the text of the NDJSON file."""
    return pl.Schema({name: _as_text(dtype) for name, dtype in export_schema().items()})


def _is_parquet(file: Path) -> bool:
    return file.name.lower().endswith(".parquet")


def _utc_timestamp(column: str, present: pl.DataType | None) -> pl.Expr:
    """An export timestamp (text, or a datetime with or without a time zone) in UTC, as a naive
    datetime."""
    if present is None:
        return pl.lit(None, dtype=pl.Datetime("us"))
    if isinstance(present, pl.Datetime):
        moment = pl.col(column)
        if present.time_zone is not None:
            moment = moment.dt.convert_time_zone("UTC").dt.replace_time_zone(None)
        return moment.cast(pl.Datetime("us"))
    text = pl.col(column).cast(pl.String).str.replace(r"(?i)\s*(UTC|Z|\+00:?00)$", "").str.replace("T", " ")
    return text.str.to_datetime(time_unit="us", strict=True)


def scan_months(files: Sequence[Path]) -> pl.LazyFrame:
    """Each row's invoice month (`invoice_month`, YYYYMM as the export writes it) and export_time
    (UTC) from the export files, lazily.

    Raises:
        SourceError: naming a file that cannot be read.
    """
    frames = []
    for file in files:
        try:
            frame = pl.scan_parquet(file) if _is_parquet(file) else pl.scan_ndjson(file, schema=ndjson_schema())
            schema = frame.collect_schema()
        except (pl.exceptions.PolarsError, OSError) as error:
            raise SourceError(f"cannot read GCP billing export file {file}: {error}") from None
        month = pl.col("invoice").struct.field("month") if "invoice" in schema else pl.lit(None)
        frames.append(
            frame.select(
                month.cast(pl.String).alias("invoice_month"),
                _utc_timestamp("export_time", schema.get("export_time")).alias("export_time"),
            )
        )
    return pl.concat(frames)


def billing_period_expr() -> pl.Expr:
    """The first day of the invoice month of each row of `scan_months`."""
    return pl.col("invoice_month").str.to_date("%Y%m")


def write_typed(files: Sequence[Path], target: Path) -> None:
    """NDJSON export files as one Parquet file DuckDB maps: the fields the mapping reads, numbers
    as the text Google wrote, timestamps in UTC; each row with its file and its place in it
    (`_source_file`, `_row`: a row's key, so new files leave it as it is).

    Raises:
        SourceError: naming the files when one is not NDJSON or a timestamp is not one.
    """
    frames = [
        pl.scan_ndjson(file, schema=ndjson_schema())
        .with_row_index("_row")
        .with_columns(pl.lit(str(file)).alias("_source_file"))
        for file in files
    ]
    # in UTC with its zone, as BigQuery's Parquet has them, so the files of a folder read alike
    utc = (_utc_timestamp(name, pl.String).dt.replace_time_zone("UTC").alias(name) for name in TIMESTAMP_COLUMNS)
    try:
        pl.concat(frames).with_columns(utc).sink_parquet(target)
    except (pl.exceptions.PolarsError, OSError) as error:
        target.unlink(missing_ok=True)
        first_line = str(error).strip().splitlines()[0][:300]
        raise SourceError(f"cannot read GCP billing export files {', '.join(map(str, files))}: {first_line}") from None


def key_snapshot(snapshot: Path, table: str, target: Path) -> None:
    """Writes a BigQuery snapshot with each row's key (`table|content hash|n`) to `target`."""
    with memory_connection() as conn:
        conn.execute(
            read_sql("staging/gcp_snapshot_keys"), {"snapshot": str(snapshot), "table": table, "target": str(target)}
        )


def read_delivery(
    files: Sequence[Path],
    locations: Sequence[str | None],
    *,
    source_name: str,
    billing_period: date,
    category_rules: Sequence[CategoryRule],
    ingested_at: datetime,
) -> tuple[MappedDelivery, int, Decimal, datetime | None]:
    """Reads one invoice month of the delivery's Parquet files (in an in-memory DuckDB): checks its
    amounts, then its raw control totals, rows and Σ cost + Σ credits, each summed separately.

    Args:
        files: Parquet files with the export's columns: export files, typed NDJSON files
            (`write_typed`) or a keyed snapshot (`key_snapshot`).
        locations: where the user finds each file (the export file, the BigQuery table); None
            for typed NDJSON files, whose rows name theirs.
        source_name, billing_period, category_rules, ingested_at: what the rows are mapped with.

    Returns:
        The delivery, its rows, its raw BilledCost and its newest export_time.

    Raises:
        SourceError: naming the row and value of a cost that is empty or an amount that is not a
            number DECIMAL(38,10) can hold.
        duckdb.Error: a file that is not the export's Parquet.
    """
    read_params = {"invoice_month": f"{billing_period:%Y%m}"}
    params = {"files": [str(file) for file in files], **read_params}
    with memory_connection() as conn:
        create_mapping(conn, "gcp", files, locations)
        bad = fetch_dict(conn, read_sql("staging/gcp_delivery_totals", "first_bad_amount"), params)
        if bad is not None:
            # file exports key rows by their line; a snapshot's rows carry their key
            located = (
                f"{bad['location']}, row {bad['_line_key']}"
                if bad["_line_key"] is not None
                else f"{bad['location']}, line {bad['source_row'] + 1}"
            )
            raise SourceError(f"{located}: {bad['problem']}; fix the export, nothing was loaded")
        totals = fetch_dict(conn, read_sql("staging/gcp_delivery_totals", "totals"), params)
    delivery = MappedDelivery(
        export_format="gcp",
        files=tuple(files),
        locations=tuple(locations),
        first_rows=(0,) * len(files),
        read_params=read_params,
        row_params={"source_name": source_name, "ingested_at": ingested_at},
        category_rules=tuple(category_rules),
        currencies=tuple(sorted(totals["currencies"] or ())),
        # only the invoice month's rows are read
        rows_outside_period=0,
        file_outside_period=None,
    )
    return delivery, totals["rows"], totals["billed_cost"], totals["newest_export_time"]
