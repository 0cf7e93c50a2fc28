"""Scaling a finished pilot run into the budget of a larger run (`runledger estimate --from-run`)."""

from __future__ import annotations

import textwrap
from datetime import date
from decimal import ROUND_HALF_EVEN, Decimal, localcontext
from fractions import Fraction
from pathlib import Path

import pytest
import yaml

from pipelines.budgets.pilot import PilotError, PilotMeasures, Target, pilot_budget, read_pilot, scale_pilot
from pipelines.plans.estimate import estimate
from pipelines.plans.files import load_budget
from pipelines.plans.schema import Budget
from tests.support.lake import memory_warehouse

PILOT_BUDGET = textwrap.dedent(
    """\
    training_run: pilot
    currency: USD
    window: {start: 2026-10-01, end: 2026-10-08}
    model: {method: sft, parameters: 7e9, tokens: 1e11, gpu_peak_tflops: 989, mfu: 0.4, gpus: 16,
            gpu_hour_price: 4, batch_size: 512, sequence_length: 4096}
    fixed: {monitoring: 100}
    thresholds: {warning: 0.8, over: 1.0}
    """
)
# 1e11 tokens at 2,000 tokens/s per GPU while training take 13,888.89 GPU-hours; 15,000 were billed
PILOT = PilotMeasures(
    training_run="pilot",
    currency="USD",
    tokens_trained=100_000_000_000,
    wall_clock_hours=Decimal(1000),
    tokens_per_gpu_second=Decimal(2000),
    gpu_hours=Decimal(15000),
    effective_mfu=Decimal("0.3"),
    gpus=16,
    compute_rate=Decimal("3.5"),
    costs={"compute": Decimal(52500), "storage": Decimal(250), "network": Decimal(0), "monitoring": Decimal(80)},
)


def exact(value: Fraction) -> Decimal:
    with localcontext(prec=80):
        return (Decimal(value.numerator) / Decimal(value.denominator)).quantize(
            Decimal("1e-10"), rounding=ROUND_HALF_EVEN
        )


@pytest.fixture(name="pilot_budget")
def pilot_budget_fixture(tmp_path: Path) -> Budget:
    path = tmp_path / "pilot.yaml"
    path.write_text(PILOT_BUDGET)
    return load_budget(path)


def test_a_moe_lora_run_on_more_gpus_is_scaled_by_flops_per_token_at_the_default_efficiency(
    pilot_budget: Budget, tmp_path: Path
) -> None:
    target = Target(
        training_run="moe-lora",
        start=date(2026, 12, 1),
        parameters=Decimal("46.7e9"),
        active_parameters=Decimal("12.9e9"),
        method="lora",
        tokens=Decimal("5e10"),
        gpus=64,
    )

    scaled = scale_pilot(pilot_budget, PILOT, target)

    # by hand: the pilot's 6 x 7e9 FLOPs per token against 4 x 12.9e9, at 0.9 on 64 GPUs (> 16):
    # 2,000 x 4.2e10 / 5.16e10 x 0.9 = 1,465.12 tokens/s per GPU; overhead 15,000 / 13,888.89 - 1 = 8 %;
    # 5e10 / (1,465.12 x 3600) x 1.08 = 10,238.10 GPU-hours at 3.5; 159.97 wall hours on 64 GPUs, 7 days;
    # storage 250 / 1000 h x 159.97 h; no network (0), monitoring left out
    throughput = exact(Fraction(2000) * Fraction(6 * 7 * 10**9, 4 * 129 * 10**8) * Fraction("0.9"))
    overhead = exact(Fraction(15000) / Fraction(10**11, 2000 * 3600) - 1)
    gpu_hours = exact(Fraction(5 * 10**10) / (Fraction(throughput) * 3600) * (1 + Fraction(overhead)))
    wall_hours = exact(Fraction(gpu_hours) / 64)
    model = scaled.budget.model
    assert (model.method, model.parameters, model.active_parameters) == ("lora", Decimal("46.7e9"), Decimal("12.9e9"))
    assert model.tokens_per_second_per_gpu == throughput and round(throughput, 2) == Decimal("1465.12")
    assert model.overhead == overhead == Decimal("0.08")
    assert (model.gpus, model.gpu_hour_price, model.batch_size, model.sequence_length) == (64, 3.5, 512, 4096)
    assert scaled.estimate.gpu_hours == gpu_hours and round(gpu_hours, 2) == Decimal("10238.10")
    assert scaled.estimate.costs == {
        "compute": exact(Fraction(gpu_hours) * Fraction("3.5")),
        "storage": exact(Fraction(250, 1000) * Fraction(wall_hours)),
    }
    assert (scaled.budget.window.start, scaled.budget.window.end) == (date(2026, 12, 1), date(2026, 12, 8))
    assert scaled.budget.thresholds == pilot_budget.thresholds
    text = scaled.text()
    assert "scaling efficiency       0.9 on 64 GPUs (pilot 16" in text
    assert "the pilot's monitoring 80.00: add what applies under `fixed:`" in text

    # the YAML is the budget: read back, it gives the same estimate
    path = tmp_path / "moe-lora.yaml"
    path.write_text(scaled.yaml_text())
    assert estimate(load_budget(path)) == scaled.estimate
    assert yaml.safe_load(scaled.yaml_text())["model"]["active_parameters"] == 12_900_000_000


def test_the_same_gpus_keep_the_pilots_throughput_per_flop(pilot_budget: Budget) -> None:
    scaled = scale_pilot(pilot_budget, PILOT, Target(training_run="again", start=date(2026, 12, 1)))

    # nothing changed but the id: the pilot's own throughput, overhead, rate and shape
    model = scaled.budget.model
    assert model.tokens_per_second_per_gpu == Decimal(2000) and model.gpus == 16 and model.method == "sft"
    assert scaled.estimate.gpu_hours == Decimal(15000)  # what the pilot was billed for its tokens
    assert scaled.estimate.costs["compute"] == Decimal(52500)


def test_a_given_scaling_efficiency_is_used_and_checked(pilot_budget: Budget) -> None:
    target = Target(training_run="big", start=date(2026, 12, 1), gpus=256, scaling_efficiency=Decimal("0.75"))
    assert scale_pilot(pilot_budget, PILOT, target).budget.model.tokens_per_second_per_gpu == Decimal(1500)
    with pytest.raises(PilotError, match=r"--scaling-efficiency must be in \(0, 1\], got 1.2"):
        scale_pilot(
            pilot_budget, PILOT, Target(training_run="x", start=date(2026, 12, 1), scaling_efficiency=Decimal("1.2"))
        )


def test_a_pilot_billed_less_than_its_training_took_is_refused(pilot_budget: Budget) -> None:
    short = PilotMeasures(**{**PILOT.__dict__, "gpu_hours": Decimal(10000)})
    with pytest.raises(PilotError, match=r"billed 10,000\.00 compute GPU-hours, fewer than its 100,000,000,000 tokens"):
        scale_pilot(pilot_budget, short, Target(training_run="x", start=date(2026, 12, 1)))


def test_unknown_runs_and_runs_without_progress_are_named() -> None:
    conn = memory_warehouse()
    with pytest.raises(PilotError, match=r"--from-run nobody: no such run in the warehouse"):
        read_pilot(conn, "nobody")
    conn.execute(
        'insert into budget_baselines (training_run, cost_category, currency, estimated_cost, thresholds, "window", '
        "budget_file) values ('planned', 'compute', 'USD', 1, {'warning': 0.8, 'over': 1}, "
        "{'start': date '2026-10-01', 'end': date '2026-11-01'}, 'budgets/planned.yaml')"
    )
    with pytest.raises(PilotError, match="--from-run planned: the run has no progress"):
        read_pilot(conn, "planned")
    conn.execute("insert into run_progress (training_run, currency, gpu_hours) values ('planned', 'USD', 10)")
    with pytest.raises(
        PilotError,
        match="its progress has no tokens_trained, wall_clock_hours, tokens_per_gpu_second, gpus, compute_rate",
    ):
        read_pilot(conn, "planned")


def test_a_pilot_needs_a_budget_with_a_model(tmp_path: Path) -> None:
    path = tmp_path / "pilot.yaml"
    path.write_text(
        "training_run: pilot\ncurrency: USD\nwindow: {start: 2026-10-01, end: 2026-10-08}\n"
        "fixed: {compute: 5000}\nthresholds: {warning: 0.8, over: 1.0}\n"
    )
    fixed_only = load_budget(path)
    with pytest.raises(PilotError, match="--from-run pilot: its budget has no `model`"):
        scale_pilot(fixed_only, PILOT, Target(training_run="x", start=date(2026, 12, 1)))
    with pytest.raises(PilotError, match=f"--from-run pilot: no budget for the run in {tmp_path}"):
        pilot_budget([], "pilot", tmp_path)
