"""`runledger export focus`: one billing period of `focus_line_items` as a FOCUS 1.2 dataset,
one file per billing source (`<source>-<YYYY-MM>.parquet` or `.csv`).

The rows come from the warehouse through a reader's connection (read-only and locked) as Arrow
batches; a second, in-memory DuckDB, which reaches no file but the output folder, writes them:

- the columns: FOCUS 1.2's that the table has, in the specification's order
  (`pipelines/data/focus_columns.csv`), then the `x_` extensions in the table's order;
- MAP columns (`Tags`, the `x_` maps) as JSON object text: FOCUS's Key-Value Format is a JSON
  object, which a Parquet MAP is not;
- timestamps in UTC: Parquet TIMESTAMP adjusted to UTC, CSV text `YYYY-MM-DDTHH:MM:SSZ`;
- money and quantities exact: Parquet DECIMAL(38, 10), CSV plain decimal text.

A file is written under a temporary name and renamed when whole.
"""

from __future__ import annotations

import csv
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from functools import cache
from pathlib import Path
from urllib.parse import quote

import duckdb
from duckdb.sqltypes import VARCHAR, DuckDBPyType

from pipelines.warehouse.sql import read_sql

EXPORT_FORMATS = ("parquet", "csv")
COLUMNS_FILE = Path(__file__).resolve().parent.parent / "data" / "focus_columns.csv"
CSV_TIMESTAMP_FORMAT = "%Y-%m-%dT%H:%M:%SZ"
BATCH_ROWS = 100_000
# The writer's working memory; the rows stream through it in batches.
WRITER_MEMORY_LIMIT = "1GiB"


class NothingToExport(ValueError):
    """The warehouse holds no line items for the billing period (and source) asked for."""


@dataclass(frozen=True)
class ExportedFile:
    """One file of an export: a billing source's line items of the period."""

    source_name: str
    path: Path
    line_items: int


@cache
def focus_columns() -> tuple[str, ...]:
    """FOCUS 1.2's columns (their Column IDs), in the order of the specification's Columns section."""
    with COLUMNS_FILE.open(newline="") as file:
        return tuple(row["column_id"] for row in csv.DictReader(file))


def export_order(columns: Sequence[str]) -> list[str]:
    """`columns` (of `focus_line_items`) in the export's order: the FOCUS 1.2 columns in the
    specification's order, then the `x_` extensions in their own.

    Raises:
        ValueError: a column is neither a FOCUS 1.2 column nor an `x_` extension.
    """
    extensions = [name for name in columns if name.startswith("x_")]
    focus = [name for name in focus_columns() if name in columns]
    others = sorted(set(columns) - set(focus) - set(extensions))
    if others:
        raise ValueError(f"focus_line_items has columns that are neither FOCUS 1.2 nor x_ extensions: {others}")
    return focus + extensions


def _exported(name: str, column_type: DuckDBPyType) -> duckdb.Expression:
    column = duckdb.ColumnExpression(name)
    if column_type.id == "map":
        return duckdb.FunctionExpression("to_json", column).cast(VARCHAR).alias(name)
    if column_type.id == "timestamp":
        return duckdb.FunctionExpression("timezone", duckdb.ConstantExpression("UTC"), column).alias(name)
    return column


def _file_writer(out: Path) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB that writes into `out` and reaches no other file (locked, like a reader)."""
    writer = duckdb.connect(
        ":memory:", config={"memory_limit": WRITER_MEMORY_LIMIT, "python_enable_replacements": False}
    )
    writer.execute("set TimeZone = 'UTC'")
    writer.execute("set allowed_directories = $folders", {"folders": [f"{out}/"]})
    writer.execute("set enable_external_access = false")
    writer.execute("set lock_configuration = true")
    return writer


def export_file_name(source_name: str, billing_period: date, export_format: str) -> str:
    """The file of a source's period: `<source>-<YYYY-MM>.<format>`, the source name with any
    character a file name cannot hold percent-encoded."""
    return f"{quote(source_name, safe=' ')}-{billing_period:%Y-%m}.{export_format}"


def export_focus(
    conn: duckdb.DuckDBPyConnection,
    billing_period: date,
    out: Path,
    export_format: str = "parquet",
    source_name: str | None = None,
) -> list[ExportedFile]:
    """Writes the billing period's line items into `out`, one file per billing source.

    Args:
        conn: a reader's connection to the lake.
        billing_period: the period's first day.
        out: the folder to write into (created when missing); a file of the same name is replaced.
        export_format: `parquet` or `csv`.
        source_name: only this billing source (default: every source with line items in the period).

    Returns:
        The files written, by source name.

    Raises:
        NothingToExport: no line items for the period (of that source).
    """
    if export_format not in EXPORT_FORMATS:
        raise ValueError(f"export format {export_format!r} is not one of {', '.join(EXPORT_FORMATS)}")
    sources = conn.execute(
        read_sql("export/focus_line_items", "sources"), {"billing_period": billing_period, "source_name": source_name}
    ).fetchall()
    if not sources:
        raise NothingToExport(
            f"no line items for billing period {billing_period:%Y-%m}"
            + (f" of source {source_name!r}" if source_name else "")
            + " in the warehouse"
        )
    out = out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    writer = _file_writer(out)
    written = []
    try:
        for name, line_items in sources:
            path = out / export_file_name(name, billing_period, export_format)
            _write(conn, writer, name, billing_period, path, export_format)
            written.append(ExportedFile(name, path, line_items))
    finally:
        writer.close()
    return written


def _write(
    conn: duckdb.DuckDBPyConnection,
    writer: duckdb.DuckDBPyConnection,
    source_name: str,
    billing_period: date,
    path: Path,
    export_format: str,
) -> None:
    batches = conn.execute(
        read_sql("export/focus_line_items", "rows"), {"billing_period": billing_period, "source_name": source_name}
    ).to_arrow_reader(BATCH_ROWS)
    rows = writer.from_arrow(batches)
    types = dict(zip(rows.columns, rows.types))
    rows = rows.select(*[_exported(name, types[name]) for name in export_order(rows.columns)])
    partial = path.with_name(f".{path.name}.partial")
    try:
        if export_format == "parquet":
            rows.write_parquet(str(partial), compression="zstd")
        else:
            rows.write_csv(str(partial), header=True, timestamp_format=CSV_TIMESTAMP_FORMAT)
        partial.replace(path)
    finally:
        partial.unlink(missing_ok=True)
