"""Builds `cost_allocations` for one billing period from `focus_line_items`."""

from __future__ import annotations

from datetime import date

import duckdb

from pipelines.sqlfiles import read_sql
from pipelines.warehouse import transaction


def _load_dimension_keys(conn: duckdb.DuckDBPyConnection, dimensions: dict[str, list[str]]) -> None:
    conn.execute(read_sql("attribution_keys_create"))
    for dimension, keys in dimensions.items():
        for priority, key in enumerate(keys):
            conn.execute(read_sql("attribution_keys_insert"), {"dimension": dimension, "tag_key": key, "priority": priority})


def allocate_period(conn: duckdb.DuckDBPyConnection, billing_period: date, dimensions: dict[str, list[str]]) -> None:
    """Replaces the period's allocations atomically."""
    _load_dimension_keys(conn, dimensions)
    params = {"billing_period": billing_period}
    with transaction(conn):
        conn.execute(read_sql("cost_allocations_delete_billing_period"), params)
        conn.execute(read_sql("cost_allocations"), params)


def check_period(conn: duckdb.DuckDBPyConnection, billing_period: date) -> list[dict]:
    """Per source and currency: line items, allocation rows, unbalanced lines, and both totals."""
    cursor = conn.execute(read_sql("cost_allocations_period_check"), {"billing_period": billing_period})
    columns = [d[0] for d in cursor.description]
    return [dict(zip(columns, row)) for row in cursor.fetchall()]
