"""The inputs-digest skip shared by the steps that keep their build when nothing they read changed."""

from datetime import date
from pathlib import Path

import duckdb
import pytest

from pipelines.attribution.allocate import allocate_period_if_changed
from pipelines.config import DEFAULT_DIMENSIONS
from pipelines.warehouse.connection import connect, transaction
from pipelines.warehouse.step_inputs import WHOLE, StepInputs
from tests.unit.test_attribution import add_line

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


def test_a_warehouse_with_the_earlier_digest_tables_rebuilds_once(tmp_path: Path) -> None:
    path = tmp_path / "warehouse.duckdb"
    with duckdb.connect(str(path)) as earlier:
        earlier.execute(
            "create table allocation_inputs (billing_period date primary key, inputs_digest varchar not null, "
            "allocated_at timestamp not null)"
        )
        earlier.execute("create table waste_inputs (inputs_digest varchar not null, built_at timestamp not null)")
        earlier.execute("insert into allocation_inputs values ('2026-10-01', 'from an earlier version', now())")
    conn = connect(path)
    tables = {name for (name,) in conn.execute("select table_name from duckdb_tables()").fetchall()}
    assert "step_inputs" in tables and not tables & {"allocation_inputs", "waste_inputs"}

    add_line(conn, "a", {"training_run": "llm-7b-pt-r1"}, "10", "8")
    assert allocate_period_if_changed(conn, PERIOD, DEFAULT_DIMENSIONS) is not None
    assert allocate_period_if_changed(conn, PERIOD, DEFAULT_DIMENSIONS) is None
