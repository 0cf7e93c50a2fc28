"""Spend before the bill lands, on the demo through the real nightly job: with the GCP export cut
on November 1, llm-3b-pt-gcp's last days are provisional (from its events); the next night's
export bills them and the estimate's error is recorded."""

from __future__ import annotations

from datetime import date, datetime
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

from pipelines.nightly import run_nightly
from tests.support.demo_cut import cut_gcp_export, restore_gcp_export
from tests.support.demo_lake import SharedDemo, copy_demo_inputs
from tests.support.lake import lake_of, reading

RUN = "llm-3b-pt-gcp"
RUN_END = datetime(2026, 11, 3, 12)  # its `end` event; it trains on 32 GPUs from October 27
GPUS = 32
TEN_PLACES = Decimal("1e-10")


def usage(root: Path) -> tuple[datetime, Decimal, Decimal]:
    """The run's newest billed hour, and the effective cost and GPU-hours of its usage lines (a day
    long or shorter) in the warehouse."""
    with reading(lake_of(root)) as conn:
        return conn.execute(
            "select max(ChargePeriodEnd), sum(effective_cost), sum(gpu_hours) from cost_allocations "
            "where training_run = $run and ChargePeriodEnd <= ChargePeriodStart + interval 1 day",
            {"run": RUN},
        ).fetchone()


def ledger(root: Path) -> list[tuple]:
    with reading(lake_of(root)) as conn:
        return conn.execute(
            "select training_run, status, billed_through, estimated_through, gpu_hours, estimated_cost, billed_cost, "
            "error from provisional_spend order by billed_through"
        ).fetchall()


def test_the_unbilled_days_are_provisional_then_billed_with_their_error(
    shared_demo: SharedDemo, tmp_path: Path
) -> None:
    root = tmp_path / "demo"
    config = copy_demo_inputs(shared_demo, root)
    moved = cut_gcp_export(root, date(2026, 11, 1), tmp_path / "later-exports")
    run_nightly(config, echo=lambda line: None)

    billed_through, cost, gpu_hours = usage(root)
    assert billed_through < RUN_END
    window_gpu_hours = Decimal((RUN_END - billed_through).total_seconds()) / 3600 * GPUS
    estimate = (cost * window_gpu_hours / gpu_hours).quantize(TEN_PLACES, ROUND_HALF_UP)
    assert ledger(root) == [(RUN, "provisional", billed_through, RUN_END, window_gpu_hours, estimate, None, None)]
    report = (root / ".runledger" / "reports" / RUN / "report.md").read_text()
    assert "Provisional, not billed yet" in report

    restore_gcp_export(root, moved)
    run_nightly(config, echo=lambda line: None)

    with reading(lake_of(root)) as conn:
        (billed,) = conn.execute(
            "select sum(effective_cost) from cost_allocations where training_run = $run "
            "and ChargePeriodEnd <= ChargePeriodStart + interval 1 day "
            "and ChargePeriodStart >= $start and ChargePeriodStart < $end",
            {"run": RUN, "start": billed_through, "end": RUN_END},
        ).fetchone()
    assert billed > 0
    assert ledger(root) == [
        (RUN, "billed", billed_through, RUN_END, window_gpu_hours, estimate, billed, estimate - billed)
    ]
    report = (root / ".runledger" / "reports" / RUN / "report.md").read_text()
    assert "Provisional, not billed yet" not in report
    assert "The latest estimate the bill has replaced" in report
