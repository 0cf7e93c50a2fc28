"""The inputs-digest skip shared by the steps that keep their build when nothing they read changed."""

from datetime import date

import duckdb
import pytest

from pipelines.warehouse.connection import transaction
from pipelines.warehouse.step_inputs import WHOLE, StepInputs

PERIOD = date(2026, 10, 1)


def test_a_recorded_build_stands_until_its_inputs_change(warehouse: duckdb.DuckDBPyConnection) -> None:
    october = StepInputs("cost_allocations", "2026-10-01", "digest-1")
    assert not october.unchanged(warehouse)
    october.record(warehouse)
    assert october.unchanged(warehouse)
    assert not StepInputs("cost_allocations", "2026-10-01", "digest-2").unchanged(warehouse)
    assert not StepInputs("cost_allocations", "2026-11-01", "digest-1").unchanged(warehouse), "per partition"
    assert not StepInputs("waste", WHOLE, "digest-1").unchanged(warehouse), "per step"

    StepInputs("cost_allocations", "2026-10-01", "digest-2").record(warehouse)
    assert not october.unchanged(warehouse), "a new build replaces the partition's record"
    assert warehouse.execute("select count(*) from step_inputs").fetchone() == (1,)


def test_a_build_rolled_back_leaves_the_previous_record(warehouse: duckdb.DuckDBPyConnection) -> None:
    def failed_build() -> None:
        with transaction(warehouse):
            StepInputs("waste", WHOLE, "failed").record(warehouse)
            raise RuntimeError("the build failed")

    built = StepInputs("waste", WHOLE, "built")
    built.record(warehouse)
    with pytest.raises(RuntimeError, match="the build failed"):
        failed_build()
    assert built.unchanged(warehouse)
