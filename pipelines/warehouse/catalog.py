"""The warehouse's tables and views with their documented columns, as the schema's SQL files
define them: read from an in-memory DuckDB in which the schema was created (never from a user's
warehouse), once per process."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import duckdb

from pipelines.warehouse.connection import create_schema
from pipelines.warehouse.sql import read_sql


@dataclass(frozen=True)
class Column:
    """A column of a table or view.

    Attributes:
        name: as the schema spells it.
        data_type: DuckDB's type, e.g. `DECIMAL(38,10)`.
        nullable: False where the table declares it NOT NULL (a view's columns are all nullable).
        description: its comment.
    """

    name: str
    data_type: str
    nullable: bool
    description: str


@dataclass(frozen=True)
class Relation:
    """A table or view of the warehouse.

    Attributes:
        name: the table or view.
        kind: `table` or `view`.
        description: its comment.
        columns: its columns in their order.
    """

    name: str
    kind: str
    description: str
    columns: tuple[Column, ...]


@cache
def warehouse_catalog() -> dict[str, Relation]:
    """Every table and view of the warehouse schema by name, documented by its `comment on`
    statements (an undocumented table, view or column has the description "")."""
    conn = duckdb.connect(":memory:")
    try:
        create_schema(conn)
        relations = conn.execute(read_sql("ops/catalog", "relations")).fetchall()
        columns = conn.execute(read_sql("ops/catalog", "columns")).fetchall()
    finally:
        conn.close()
    columns_of: dict[str, list[Column]] = {}
    for relation, name, data_type, nullable, description in columns:
        columns_of.setdefault(relation, []).append(Column(name, data_type, nullable, description or ""))
    return {
        name: Relation(name, kind, description or "", tuple(columns_of.get(name, ())))
        for name, kind, description in relations
    }


def table_columns(table: str) -> dict[str, str]:
    """The columns of a warehouse table or view, in order, with their DuckDB types (`VARCHAR`,
    `DECIMAL(38,10)`, `TIMESTAMP`, ...), as the schema's SQL creates them."""
    return {column.name: column.data_type for column in warehouse_catalog()[table].columns}
