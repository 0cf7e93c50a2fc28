"""The lake of a test's project folder: connections as a reader or a writer, and an in-memory
DuckDB holding the same schema for the unit tier (the SQL is the same; no lake files)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import closing, contextmanager
from datetime import datetime
from decimal import Decimal
from pathlib import Path

import duckdb

from pipelines.config import load_config
from pipelines.warehouse.connection import connect, connect_read_only, create_schema
from pipelines.warehouse.lake import Lake


def lake_of(project: Path) -> Lake:
    """The lake of `project`: a `runledger.yaml` file or a folder holding one; a folder without
    one has the embedded lake at `.runledger/lake`."""
    config = project if project.is_file() else project / "runledger.yaml"
    if config.is_file():
        return load_config(config).lake
    return Lake.in_folder(project / ".runledger" / "lake")


def _lake(project: Path | Lake) -> Lake:
    return project if isinstance(project, Lake) else lake_of(project)


@contextmanager
def reading(project: Path | Lake) -> Iterator[duckdb.DuckDBPyConnection]:
    """A reader's connection to the project's lake, closed afterwards."""
    with closing(connect_read_only(_lake(project))) as conn:
        yield conn


@contextmanager
def writing(project: Path | Lake) -> Iterator[duckdb.DuckDBPyConnection]:
    """A writer's connection to the project's lake, closed afterwards."""
    with closing(connect(_lake(project))) as conn:
        yield conn


def memory_warehouse() -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB with the warehouse's tables, macros and views."""
    conn = duckdb.connect(":memory:", config={"python_enable_replacements": False})
    create_schema(conn)
    return conn


def insert_line_item(conn: duckdb.DuckDBPyConnection, run: str, **columns: object) -> None:
    """Inserts one focus_line_items row of an AWS EC2 line tagged `training_run: run`: the given
    FOCUS columns over the defaults below (one October 2026 Usage line of source aws-main)."""
    values = {
        "x_SourceName": "aws-main",
        "x_SourceFormat": "aws_cur2",
        "BillingCurrency": "USD",
        "BillingPeriodStart": datetime(2026, 10, 1),
        "ChargeCategory": "Usage",
        "ProviderName": "Amazon Web Services",
        "SubAccountId": "111122223333",
        "ServiceName": "Amazon Elastic Compute Cloud",
        "x_GpuHours": Decimal(0),
        **columns,
    }
    names = list(values)
    conn.execute(
        f"insert into focus_line_items ({', '.join(names)}, Tags) "
        f"values ({', '.join('$' + name for name in names)}, map(['training_run'], [$run]))",
        {**values, "run": run},
    )


# The columns the view cost_allocations takes from the allocation's line item in focus_line_items.
LINE_COLUMNS = (
    "ChargePeriodStart",
    "ChargePeriodEnd",
    "ProviderName",
    "SubAccountId",
    "ServiceName",
    "x_CostCategory",
    "ResourceId",
)
# `insert into cost_allocations (<columns>) values (<values>)`
ALLOCATION_INSERT = re.compile(
    r"\s*insert\s+into\s+cost_allocations\s*\((?P<columns>[^)]*)\)\s*values\s*\((?P<values>.*)\)\s*;?\s*",
    re.IGNORECASE | re.DOTALL,
)


def _top_level_items(text: str) -> list[str]:
    """The comma-separated items of a SQL list, commas inside parentheses or quotes left alone."""
    items, depth, quoted, item = [], 0, False, ""
    for character in text:
        quoted ^= character == "'"
        depth += (character == "(") - (character == ")") if not quoted else 0
        if character == "," and not depth and not quoted:
            items.append(item.strip())
            item = ""
        else:
            item += character
    return [*items, item.strip()]


def insert_allocation(conn: duckdb.DuckDBPyConnection, statement: str, params: dict[str, object]) -> None:
    """Runs a test's `insert into cost_allocations (...) values (...)` of one row as the attribution
    step stores it: the part into cost_allocation_parts and, unless focus_line_items holds its line
    already, a line item carrying the columns the view cost_allocations takes from it
    (x_CostCategory 'compute' and x_GpuHours 0 unless given)."""
    match = ALLOCATION_INSERT.fullmatch(statement)
    assert match is not None, statement
    pairs = dict(zip(_top_level_items(match["columns"]), _top_level_items(match["values"]), strict=True))
    row = ", ".join(f"{value} as {column}" for column, value in pairs.items())
    conn.execute(f"create or replace temp table new_allocation as select {row}", params)
    line = [column for column in pairs if column in LINE_COLUMNS]
    stored = f"* exclude ({', '.join(line)})" if line else "*"
    conn.execute(f"insert into cost_allocation_parts by name select {stored} from new_allocation")
    defaults = {"x_SourceFormat": "'test'", "x_CostCategory": "'compute'", "x_GpuHours": "0"}
    line_columns = [
        *(f"{value} as {column}" for column, value in defaults.items() if column not in pairs),
        *("x_LineItemKey", "x_SourceName", "BillingPeriodStart", "BillingCurrency", *line),
    ]
    conn.execute(
        f"insert into focus_line_items by name select {', '.join(line_columns)} from new_allocation "
        "where not exists (select 1 from focus_line_items where x_LineItemKey = new_allocation.x_LineItemKey "
        "and x_SourceName = new_allocation.x_SourceName "
        "and BillingPeriodStart = new_allocation.BillingPeriodStart)"
    )
    conn.execute("drop table new_allocation")
