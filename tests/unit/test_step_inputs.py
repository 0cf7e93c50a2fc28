"""The inputs-digest skip shared by the steps that keep their build, and the checks that keep their
conclusion, when nothing they read changed."""

from collections.abc import Callable
from datetime import date

import dagster as dg
import duckdb
import pytest

from pipelines.orchestration.marts import Check
from pipelines.warehouse.connection import transaction
from pipelines.warehouse.step_inputs import WHOLE, StepInputs, concluded_if_changed

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


def test_a_check_shows_its_last_conclusion_until_its_inputs_change(warehouse: duckdb.DuckDBPyConnection) -> None:
    runs: list[str] = []

    def conclude(outcome: str, keep: bool = True) -> Callable[[], tuple[str, bool]]:
        return lambda: (runs.append(outcome) or outcome, keep)

    reconciled = StepInputs("reconciliation", WHOLE, "loads-1")
    assert concluded_if_changed(warehouse, reconciled, conclude("4 periods, all 0")) == ("4 periods, all 0", True)
    assert concluded_if_changed(warehouse, reconciled, conclude("never run")) == ("4 periods, all 0", False)
    changed = StepInputs("reconciliation", WHOLE, "loads-2")
    assert concluded_if_changed(warehouse, changed, conclude("1 difference", keep=False)) == ("1 difference", True)
    assert concluded_if_changed(warehouse, changed, conclude("1 difference", keep=False)) == ("1 difference", True)
    assert runs == ["4 periods, all 0", "1 difference", "1 difference"], "a conclusion not kept is reached again"


def test_a_warning_kept_by_a_check_is_the_same_warning_on_a_night_it_does_not_run(
    warehouse: duckdb.DuckDBPyConnection,
) -> None:
    warning = dg.AssetCheckResult(
        check_name="untagged_share",
        passed=False,
        severity=dg.AssetCheckSeverity.WARN,
        description="untagged share above 2% in 2026-11 USD (2.9%)",
        metadata={"threshold": dg.MetadataValue.float(0.02), "share_by_period": dg.MetadataValue.md("| a |\n|---|")},
    )
    check = Check("untagged_share", "", lambda conn, config: warning, parameters=lambda config: {"threshold": "0.02"})
    kept = check.restore(check.outcome(warehouse, None))
    assert (kept.passed, kept.severity, kept.description, kept.metadata) == (
        warning.passed,
        warning.severity,
        warning.description,
        warning.metadata,
    )
