"""The warehouse's tables as their DDL in `sql/schema/` creates them, for code that needs a
table's columns (its DDL is the one place a table's columns are written)."""

from functools import cache

import duckdb

from pipelines.warehouse.sql import read_sql


@cache
def table_columns(table: str) -> dict[str, str]:
    """The columns of a warehouse table, in order, with their DuckDB types (`VARCHAR`,
    `DECIMAL(38,10)`, `TIMESTAMP`, ...), as `sql/schema/<table>.sql` creates it."""
    with duckdb.connect() as conn:
        conn.execute(read_sql(f"schema/{table}"))
        relation = conn.table(table)
        return dict(zip(relation.columns, (str(column_type) for column_type in relation.types)))
