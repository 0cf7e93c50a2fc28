"""What to do next on the demo: the recommendations computed by hand from what a user can read
(run_progress, the run events, the run's costs), the savings equal to the waste and variance
figures they come from, and the reports' "What to do next" sections. Reads the session's shared
demo in place."""

from __future__ import annotations

import csv
from decimal import ROUND_HALF_UP, Decimal, localcontext
from pathlib import Path

import pytest

from pipelines.recommendations.tables import PRICE_RATIOS_FILE
from tests.support.demo_lake import SharedDemo
from tests.support.lake import lake_of, reading

RUN_7B = "llm-7b-pt-r1"
RUN_3B = "llm-3b-pt-gcp"
CENT = Decimal("0.01")


@pytest.fixture(scope="module")
def warehouse(shared_demo: SharedDemo) -> Path:
    return lake_of(shared_demo.root)


def _rows(warehouse: Path, sql: str, **parameters: object) -> list[tuple]:
    with reading(warehouse) as conn:
        return conn.execute(sql, parameters).fetchall()


def _saving(warehouse: Path, run: str, kind: str) -> Decimal:
    ((saving,),) = _rows(
        warehouse,
        "select estimated_saving from recommendations where training_run = $run and kind = $kind",
        run=run,
        kind=kind,
    )
    return saving


def _report(shared_demo: SharedDemo, run: str) -> str:
    return (shared_demo.root / ".runledger" / "reports" / run / "report.md").read_text()


def test_the_7b_checkpoint_interval_is_the_young_daly_optimum_computed_by_hand(warehouse: Path) -> None:
    """tau = sqrt(2 w MTBF) with w the checkpoints' 120 s and MTBF = productive hours / failures;
    the saving is the overhead (checkpoint writes + expected recompute) at the run's mean interval
    less the overhead at tau, x its GPUs x its actual rate."""
    ((productive_hours,),) = _rows(
        warehouse, "select productive_hours from run_progress where training_run = $r", r=RUN_7B
    )
    ((failures, checkpoints, write_seconds, gpus),) = _rows(
        warehouse,
        "select count(*) filter (where event = 'failure'), count(*) filter (where event = 'checkpoint'), "
        "avg(duration_seconds) filter (where event = 'checkpoint'), max(gpus) filter (where event = 'start') "
        "from run_events where training_run = $r",
        r=RUN_7B,
    )
    ((compute_cost, compute_gpu_hours),) = _rows(
        warehouse,
        "select sum(effective_cost), sum(gpu_hours) from run_costs "
        "where training_run = $r and cost_category = 'compute'",
        r=RUN_7B,
    )
    assert (productive_hours, failures, checkpoints, write_seconds, gpus) == (Decimal("178.5"), 2, 30, 120, 128)
    with localcontext(prec=40):
        w = Decimal(write_seconds) / 3600
        mtbf = productive_hours / failures
        tau = (2 * w * mtbf).sqrt()
        used = productive_hours / checkpoints

        def overhead(interval: Decimal) -> Decimal:
            return productive_hours / interval * w + failures * interval / 2

        rate = compute_cost / compute_gpu_hours
        expected = (overhead(used) - overhead(tau)) * gpus * rate
    assert mtbf == Decimal("89.25") and round(tau, 4) == Decimal("2.4393") and used == Decimal("5.95")
    saving = _saving(warehouse, RUN_7B, "checkpoint_interval")
    assert abs(saving - expected) < Decimal("1e-6")
    assert saving.quantize(CENT, ROUND_HALF_UP) == expected.quantize(CENT, ROUND_HALF_UP) == Decimal("1286.55")
    ((action, evidence),) = _rows(
        warehouse,
        "select action, evidence from recommendations where training_run = $r and kind = 'checkpoint_interval'",
        r=RUN_7B,
    )
    assert action == "Checkpoint every 2.44 hours of training instead of every 5.95 hours."
    assert "MTBF 89.25 h" in evidence and "the failures lost 1,056 GPU-hours to recompute" in evidence


def test_idle_and_on_demand_savings_equal_the_waste_and_pricing_mix_they_come_from(warehouse: Path) -> None:
    ((idle_waste,),) = _rows(
        warehouse, "select sum(effective_cost) from waste where training_run = $r and kind = 'idle_after_run'", r=RUN_7B
    )
    ((pricing_mix,),) = _rows(
        warehouse,
        "select amount from variance_causes "
        "where training_run = $r and cause = 'pricing_mix' and pricing = 'on_demand'",
        r=RUN_7B,
    )
    assert _saving(warehouse, RUN_7B, "stop_idle_after_run") == idle_waste
    assert _saving(warehouse, RUN_7B, "commit_on_demand_gpus") == pricing_mix == Decimal("6896.88")
    for kind, waste_kind in (("colocate_data", "cross_region_transfer"), ("low_gpu_utilization", "low_utilization")):
        ((waste,),) = _rows(
            warehouse,
            "select sum(effective_cost) from waste where training_run = $r and kind = $k",
            r=RUN_7B,
            k=waste_kind,
        )
        assert _saving(warehouse, RUN_7B, kind) == waste


def test_cold_checkpoints_save_the_listed_share_of_the_storage_after_the_run(warehouse: Path) -> None:
    """The 13B run's bucket, charged after its registry window's end (2026-11-14) to 2026-11-29:
    per 30-day month, times 1 - the Glacier Instant Retrieval ratio of S3 Standard."""
    ((after_end, last_charge),) = _rows(
        warehouse,
        "select sum(effective_cost), max(ChargePeriodEnd) from cost_allocations where training_run = 'llm-13b-ft-r2' "
        "and ResourceId = 'ckpt-13b-ft' and ChargePeriodStart >= timestamp '2026-11-14'",
    )
    hours = Decimal((last_charge - last_charge.replace(day=14, hour=0)).total_seconds()) / 3600
    expected = (after_end * 720 / hours) * (1 - Decimal("0.1739130435"))
    assert abs(_saving(warehouse, "llm-13b-ft-r2", "cold_checkpoints") - expected) < Decimal("1e-8")


def test_the_listed_price_ratios_are_their_prices_ratio_with_a_source() -> None:
    with PRICE_RATIOS_FILE.open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert {row["provider"] for row in rows} == {"Amazon Web Services", "Google Cloud"}
    for row in rows:
        ratio = (Decimal(row["colder_price"]) / Decimal(row["storage_price"])).quantize(Decimal("1e-10"), ROUND_HALF_UP)
        assert Decimal(row["price_ratio"]) == ratio, row
        assert row["source"].startswith("https://") and row["retrieved"]


def test_a_run_without_failures_has_no_checkpoint_interval_and_its_report_says_why(
    warehouse: Path, shared_demo: SharedDemo
) -> None:
    assert _rows(warehouse, "select kind from recommendations where training_run = $r", r=RUN_3B) == [
        ("colocate_data",),
        ("cold_checkpoints",),
    ]
    assert ("checkpoint_interval", "no failures: without one the mean time between failures is unknown") in (
        _rows(warehouse, "select kind, reason from recommendations_left_out where training_run = $r", r=RUN_3B)
    )
    section = _report(shared_demo, RUN_3B).split("## What to do next\n", 1)[1]
    assert (
        "Left out: checkpoint interval: no failures: without one the mean time between failures is unknown." in section
    )


def test_the_7b_report_ends_with_what_to_do_next_largest_saving_first(shared_demo: SharedDemo) -> None:
    report = _report(shared_demo, RUN_7B)
    section = report.split("\n## What to do next\n", 1)[1]
    assert "\n## " not in section  # the last section
    rows = [line.split(" | ") for line in section.splitlines() if line.startswith("| ") and line[2].isdigit()]
    savings = {kind: saving for _, kind, saving, *_ in rows}
    assert {kind: savings[kind] for kind in list(savings)[:4]} == {
        "commit on-demand GPUs": "6,896.88 USD",
        "stop idle resources after the run": "3,754.93 USD",
        "checkpoint interval": "1,286.55 USD",
        "low GPU utilization": "929.29 USD",
    }
    assert savings["keep data in the GPUs' region"] == "59.73 USD"
    assert savings["colder storage for checkpoints"].endswith(" USD a month")
    amounts = [Decimal(saving.split()[0].replace(",", "")) for saving in savings.values()]
    assert amounts == sorted(amounts, reverse=True)
    (checkpoint_row,) = [row for row in rows if row[1] == "checkpoint interval"]
    assert checkpoint_row[3] == "Checkpoint every 2.44 hours of training instead of every 5.95 hours."
    assert "Left out:" not in section


def test_the_summary_lists_the_ten_largest_savings_across_runs(warehouse: Path, shared_demo: SharedDemo) -> None:
    summary = (shared_demo.root / ".runledger" / "reports" / "summary.md").read_text()
    section = summary.split("## What to do next: the ten largest savings\n", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| ") and line[2].isdigit()]
    ((recommended,),) = _rows(warehouse, "select count(*) from recommendations")
    assert len(rows) == min(recommended, 10) > 0
    assert rows[0].startswith("| 1 | [llm-7b-pt-r1](llm-7b-pt-r1/report.md) | commit on-demand GPUs | 6,896.88 USD |")
