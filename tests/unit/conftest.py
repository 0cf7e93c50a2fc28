"""Fixtures shared by the unit tests; a module's own fixture of the same name overrides one here
(tests/unit/test_waste.py has its own `warehouse`)."""

import duckdb
import pytest

from pipelines.attribution.registry import RegisteredRun, replace_run_registry
from pipelines.warehouse.connection import transaction
from tests.support.lake import memory_warehouse


@pytest.fixture
def warehouse() -> duckdb.DuckDBPyConnection:
    conn = memory_warehouse()
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
