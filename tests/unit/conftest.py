"""Fixtures shared by the unit tests; a module's own fixture of the same name overrides one here
(tests/unit/test_waste.py has its own `warehouse`)."""

from pathlib import Path

import duckdb
import pytest

from pipelines.attribution.registry import RegisteredRun, replace_run_registry
from pipelines.warehouse.connection import connect, transaction
from pipelines.warehouse.lake import Lake
from tests.support.lake import memory_warehouse


def _with_registry(conn: duckdb.DuckDBPyConnection) -> duckdb.DuckDBPyConnection:
    with transaction(conn):
        replace_run_registry(
            conn,
            [
                RegisteredRun(
                    id="llm-7b-pt-r1", experiment="scaling-7b", dataset_version="fineweb-edu-v3.2", owner="alice"
                ),
                RegisteredRun(id="llm-13b-ft-r2", experiment="ft-13b", dataset_version="sft-mix-v7", owner="bob"),
            ],
        )
    return conn


@pytest.fixture
def warehouse() -> duckdb.DuckDBPyConnection:
    return _with_registry(memory_warehouse())


@pytest.fixture
def lake_warehouse(tmp_path: Path) -> duckdb.DuckDBPyConnection:
    """`warehouse` in an embedded lake (a SQLite catalog and Parquet files in tmp_path): for the
    steps that keep their build while the files of the tables they read are the same."""
    return _with_registry(connect(Lake.in_folder(tmp_path / "lake")))
