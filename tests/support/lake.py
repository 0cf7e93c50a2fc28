"""The lake of a test's project folder: connections as a reader or a writer, and an in-memory
DuckDB holding the same schema for the unit tier (the SQL is the same; no lake files)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import closing, contextmanager
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
