"""A delivery as DuckDB maps it onto FOCUS: one billing period's files of one source, mapped by
the SQL of its format straight from its Parquet files.

A format's mapping is one file of named statements (`FormatMapping`), kept beside the code that
reads the format: `create` (its temporary tables and macros), `inputs` (the distinct inputs of the
cost category rules its delivery holds), `insert` (its rows into `focus_line_items`), `staged` (its
rows to a Parquet file) and those that fill its tables of distinct values (`units`, `products`):
what is a function of a column with few distinct values (a unit, a SKU's attributes) is derived
once per value and joined back, not computed on every row. Every format shares
`sql/staging/macros.sql` (the money, text and timestamp rules and the mapping tables) and the cost
category rules (`categorize` in `sql/staging/cost_categories.sql`). A load maps the rows as it
inserts them into `focus_line_items`, or writes them to a staging file first (`stage`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import duckdb

from pipelines.sources.mappings import MappingRule, fill_mapping_tables
from pipelines.warehouse.comments import execute_ddl
from pipelines.warehouse.connection import duckdb_limits
from pipelines.warehouse.sql import dict_rows, read_sql, read_sql_file


@dataclass(frozen=True)
class FormatMapping:
    """How DuckDB maps one export format onto FOCUS.

    Attributes:
        name: the format's name in its macros (`cur2_focus_rows`, `gcp_focus_rows`, ...).
        sql: its file of named statements (`create`, `inputs`, `insert`, `staged`, and those of
            `distinct_values`).
        reads_focus_columns: its mapping reads focus_line_items' own columns (the FOCUS files).
        distinct_values: its statements that fill a table of distinct values its rows are mapped
            with (`units`: the FOCUS unit of each provider unit in `unit_names`), in order.
    """

    name: str
    sql: Path
    reads_focus_columns: bool = False
    distinct_values: tuple[str, ...] = ()

    def statement(self, name: str) -> str:
        """The text of the mapping's statement `name`."""
        return read_sql_file(self.sql, name)


@dataclass(frozen=True)
class MappedDelivery:
    """One billing period's files of one source, what their rows are mapped with, and what a first
    read of them found (currencies, rows of another period).

    Attributes:
        mapping: the SQL of its format.
        files: the Parquet files DuckDB reads, in delivery order.
        locations: where the user finds each file (x_SourceFile); None when its rows name it.
        first_rows: the delivery's row number of each file's first row (CUR 2.0 keys).
        read_params: what selects the delivery's rows of the files, besides `files`.
        row_params: what the rows are mapped with (x_SourceName, x_IngestedAt, ...).
        category_rules: the mapping rules: cost category rules (x_CostCategory) and configured GPU
            instance types (x_GpuCount).
        currencies: the currencies of the delivery's rows.
        rows_outside_period: rows of another billing period (a delivery holds only its own).
        file_outside_period: where the first of them is.
    """

    mapping: FormatMapping
    files: tuple[Path, ...]
    locations: tuple[str | None, ...]
    first_rows: tuple[int, ...]
    read_params: Mapping[str, object]
    row_params: Mapping[str, object]
    category_rules: tuple[MappingRule, ...]
    currencies: tuple[str, ...]
    rows_outside_period: int
    file_outside_period: str | None

    def _read_params(self) -> dict[str, object]:
        return {"files": [str(file) for file in self.files], **self.read_params}

    def prepare(self, conn: duckdb.DuckDBPyConnection) -> None:
        """Creates the mapping's temporary macros and tables on the connection and fills them for
        the delivery: its files, the mapping tables, its tables of distinct values (the FOCUS unit
        of each distinct unit, ...) and the cost category of each distinct rule input it holds."""
        create_mapping(conn, self.mapping, self.files, self.locations, self.first_rows)
        fill_mapping_tables(conn, self.category_rules)
        conn.execute(self.mapping.statement("inputs"), self._read_params())
        conn.execute(read_sql("staging/cost_categories", "categorize"))
        for name in self.mapping.distinct_values:
            conn.execute(self.mapping.statement(name), self._read_params())

    def stage(self, target: Path) -> None:
        """Writes the delivery's FOCUS rows into a Parquet file, outside the warehouse: the
        mapping's output as it is, to inspect."""
        with memory_connection() as conn:
            self.prepare(conn)
            conn.execute(self.mapping.statement("staged"), {**self.statement_params(), "target": str(target)})

    def statement_params(self) -> dict[str, object]:
        """The parameters of the mapping's statements (`insert`, `staged`)."""
        return {**self._read_params(), **self.row_params}


def memory_connection() -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB within the warehouse's memory limit; rows need no order (their
    x_LineItemKey numbers them), so a staging file is written as it is computed."""
    return duckdb.connect(
        config={"python_enable_replacements": False, "preserve_insertion_order": False, **duckdb_limits()}
    )


def fetch_dict(conn: duckdb.DuckDBPyConnection, sql: str, params: Mapping[str, object]) -> dict | None:
    """The statement's first row as {column: value}, None when it returns no row."""
    rows = dict_rows(conn.execute(sql, params))
    return rows[0] if rows else None


def create_mapping(
    conn: duckdb.DuckDBPyConnection,
    mapping: FormatMapping,
    files: Sequence[Path],
    locations: Sequence[str | None],
    first_rows: Sequence[int] | None = None,
) -> None:
    """Creates the shared and the format's mapping (temporary macros and tables) on the connection
    and lists the delivery's files in `delivery_files`.

    Args:
        conn: the warehouse or an in-memory connection.
        mapping: the SQL of the delivery's format.
        files: the Parquet files DuckDB reads.
        locations: where the user finds each file.
        first_rows: the delivery row number of each file's first row (0s when not given).
    """
    conn.execute(read_sql("staging/macros"))
    if mapping.reads_focus_columns:
        execute_ddl(conn, read_sql("schema/focus_line_items"))
    conn.execute(mapping.statement("create"))
    conn.execute(
        read_sql("staging/lookups", "delivery_files"),
        {
            "files": [str(file) for file in files],
            "locations": list(locations),
            "first_rows": list(first_rows) if first_rows is not None else [0] * len(files),
        },
    )
