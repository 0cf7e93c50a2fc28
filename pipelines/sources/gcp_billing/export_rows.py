"""The GCP Cloud Billing export (BigQuery schema), read for DuckDB's mapping onto FOCUS 1.2
(`mapping.sql` beside this module, which documents the mapping).

DuckDB reads the export's Parquet as it is: export files, and BigQuery snapshots once their rows
are keyed (`key_snapshot`). NDJSON files are typed by polars first (`write_typed`): every field the
mapping reads, numbers as the text Google wrote (the mapping's `money` converts them exactly),
timestamps like `2026-10-07 00:00:00 UTC` parsed as UTC. Fields an older table does not have are
NULL.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import date, datetime
from decimal import Decimal
from functools import cache
from pathlib import Path

import polars as pl

from connectors.errors import SourceError
from pipelines.sources.delivery import FormatMapping, MappedDelivery, create_mapping, fetch_dict, memory_connection
from pipelines.sources.mappings import MappingRule
from pipelines.warehouse.sql import read_sql, read_sql_file

MAPPING = FormatMapping("gcp", Path(__file__).with_name("mapping.sql"), distinct_values=("skus",))
TOTALS = Path(__file__).with_name("totals.sql")
SNAPSHOT_KEYS = Path(__file__).with_name("snapshot_keys.sql")

TIMESTAMP_COLUMNS = ("usage_start_time", "usage_end_time", "export_time")
# Columns RunLedger adds to the export's: a keyed snapshot's row key, a typed NDJSON row's file and place.
ADDED_COLUMNS = ("_line_key", "_source_file", "_row")


@cache
def export_schema() -> pl.Schema:
    """The export's fields the mapping reads, typed as the mapping's template (`gcp_columns`)."""
    with memory_connection() as conn:
        conn.execute(read_sql("staging/macros"))
        conn.execute(MAPPING.statement("create"))
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


def _utc_timestamp(column: str, present: pl.DataType | None, *, strict: bool = True) -> pl.Expr:
    """An export timestamp (text, or a datetime with or without a time zone) in UTC, as a naive
    datetime; text that is not one fails, or is NULL unless `strict`."""
    if present is None:
        return pl.lit(None, dtype=pl.Datetime("us"))
    if isinstance(present, pl.Datetime):
        moment = pl.col(column)
        if present.time_zone is not None:
            moment = moment.dt.convert_time_zone("UTC").dt.replace_time_zone(None)
        return moment.cast(pl.Datetime("us"))
    text = pl.col(column).cast(pl.String).str.replace(r"(?i)\s*(UTC|Z|\+00:?00)$", "").str.replace("T", " ")
    return text.str.to_datetime(time_unit="us", strict=strict)


def scan_months(files: Sequence[Path]) -> pl.LazyFrame:
    """Each row's invoice month (`invoice_month`, YYYYMM as the export writes it), export_time
    (UTC), file (`file`) and row in it (`_row`, 0-based) from the export files, lazily.

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
            frame.with_row_index("_row").select(
                month.cast(pl.String).alias("invoice_month"),
                _utc_timestamp("export_time", schema.get("export_time")).alias("export_time"),
                pl.lit(str(file)).alias("file"),
                pl.col("_row").cast(pl.Int64),
            )
        )
    return pl.concat(frames)


def place(file: str, row: int) -> str:
    """A row (0-based) of an export file as the messages name it: a line of an NDJSON file, a
    row of a Parquet file."""
    return f"{file}, row {row + 1}" if _is_parquet(Path(file)) else f"{file}, line {row + 1}"


def _misshapen(value: object, dtype: pl.DataType, key: str) -> str | None:
    """The key (dotted) and problem of the first part of a JSON value the export's field of type
    `dtype` cannot hold: a value where an object or an array belongs. Values where text belongs
    are read as their text, and checked by the mapping."""
    if value is None:
        return None
    if isinstance(dtype, pl.Struct):
        if not isinstance(value, dict):
            return f"{key}: {json.dumps(value)[:40]} is not a JSON object"
        found = (_misshapen(value.get(field.name), field.dtype, f"{key}.{field.name}") for field in dtype.fields)
        return next((problem for problem in found if problem is not None), None)
    if isinstance(dtype, pl.List):
        if not isinstance(value, list):
            return f"{key}: {json.dumps(value)[:40]} is not a JSON array"
        return next((p for p in (_misshapen(item, dtype.inner, key) for item in value) if p is not None), None)
    return None


def _first_bad_line(file: Path) -> str | None:
    """Where and why polars cannot read an NDJSON export file: `file, line N[, key K]: problem`
    for the first line that is not a JSON object of the export's shape or whose timestamp is not
    one (lines counted from 1, blank lines included), or None."""
    try:
        text = file.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as error:
        return f"{file}: cannot read the file as UTF-8 text: {error}"
    line_numbers = []
    # lines as polars splits them: at a newline only, blank when only JSON whitespace is left
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip(" \t\r"):
            continue
        line_numbers.append(number)
        try:
            row = json.loads(line)
        except json.JSONDecodeError as error:
            return f"{file}, line {number}: not JSON: {error.msg} (column {error.colno})"
        if not isinstance(row, dict):
            return f"{file}, line {number}: not a JSON object"
        found = (_misshapen(row.get(key), dtype, key) for key, dtype in ndjson_schema().items())
        problem = next((problem for problem in found if problem is not None), None)
        if problem is not None:
            return f"{file}, line {number}, key {problem}"
    unparsed = [
        pl.when(pl.col(name).is_not_null() & _utc_timestamp(name, pl.String, strict=False).is_null()).then(
            pl.struct(pl.lit(name).alias("key"), pl.col(name).alias("value"))
        )
        for name in TIMESTAMP_COLUMNS
    ]
    try:
        bad = (
            pl.scan_ndjson(file, schema=ndjson_schema())
            .with_row_index("_row")
            .select("_row", pl.coalesce(unparsed).alias("bad"))
            .filter(pl.col("bad").is_not_null())
            .head(1)
            .collect()
        )
    except pl.exceptions.PolarsError:  # a problem the lines do not show: polars' message says it
        return None
    if bad.is_empty():
        return None
    row, found = bad.row(0)
    return (
        f"{file}, line {line_numbers[row]}, key {found['key']}: {found['value'][:40]!r} is not a timestamp "
        "such as 2026-10-07 00:00:00 UTC"
    )


def unreadable_files_error(files: Sequence[Path], error: Exception) -> SourceError:
    """The error for export files polars cannot read: the first bad line of an NDJSON file,
    naming its file, line and key; else every file and polars' message.

    Args:
        files: the source's export files.
        error: what polars raised.
    """
    for file in files:
        if not _is_parquet(file):
            problem = _first_bad_line(file)
            if problem is not None:
                return SourceError(f"{problem}; fix or re-export the file, nothing was loaded")
    first_line = str(error).strip().splitlines()[0][:300]
    return SourceError(f"cannot read GCP billing export files {', '.join(map(str, files))}: {first_line}")


def billing_period_expr() -> pl.Expr:
    """The first day of the invoice month of each row of `scan_months`."""
    return pl.col("invoice_month").str.to_date("%Y%m")


def write_typed(files: Sequence[Path], target: Path) -> None:
    """NDJSON export files as one Parquet file DuckDB maps: the fields the mapping reads, numbers
    as the text Google wrote, timestamps in UTC; each row with its file and its place in it
    (`_source_file`, `_row`: a row's key, so new files leave it as it is).

    Raises:
        SourceError: naming the file, line and key of the first line that is not an export row
            (`unreadable_files_error`).
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
        raise unreadable_files_error(files, error) from None


def key_snapshot(snapshot: Path, table: str, target: Path) -> None:
    """Writes a BigQuery snapshot with each row's key (`table|content hash|n`) to `target`."""
    with memory_connection() as conn:
        conn.execute(read_sql_file(SNAPSHOT_KEYS), {"snapshot": str(snapshot), "table": table, "target": str(target)})


def read_delivery(
    files: Sequence[Path],
    locations: Sequence[str | None],
    *,
    source_name: str,
    billing_period: date,
    category_rules: Sequence[MappingRule],
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
            finite number below 10^15.
        duckdb.Error: a file that is not the export's Parquet.
    """
    read_params = {"invoice_month": f"{billing_period:%Y%m}"}
    params = {"files": [str(file) for file in files], **read_params}
    with memory_connection() as conn:
        create_mapping(conn, MAPPING, files, locations)
        bad = fetch_dict(conn, read_sql_file(TOTALS, "first_bad_amount"), params)
        if bad is not None:
            # file exports key rows by their line; a snapshot's rows carry their key
            located = (
                f"{bad['location']}, row {bad['_line_key']}"
                if bad["_line_key"] is not None
                else place(bad["location"], bad["source_row"])
            )
            raise SourceError(f"{located}: {bad['problem']}; fix the export, nothing was loaded")
        totals = fetch_dict(conn, read_sql_file(TOTALS, "totals"), params)
    delivery = MappedDelivery(
        mapping=MAPPING,
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
