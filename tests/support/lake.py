"""The lake of a test's project folder: connections as a reader or a writer, and an in-memory
DuckDB holding the same schema for the unit tier (the SQL is the same; no lake files)."""

from __future__ import annotations

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
