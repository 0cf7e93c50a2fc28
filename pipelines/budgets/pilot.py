"""`runledger estimate --from-run`: the budget of a larger run scaled from a finished pilot's
measured throughput, overhead and rates.

The pilot's budget gives its model (parameters, method); the warehouse gives what it measured. The
new run processes tokens at the pilot's throughput x the pilot's FLOPs per token / its own x the
scaling efficiency (the MFU carries over), with the pilot's overhead, at the pilot's compute rate;
storage and network cost what they cost the pilot per wall-clock hour.
"""

from __future__ import annotations

import difflib
import math
from dataclasses import dataclass
from datetime import date, timedelta
from decimal import Decimal, localcontext
from pathlib import Path
from typing import Any

import duckdb
import yaml

from pipelines.plans.estimate import DECIMAL_PRECISION, SECONDS_PER_HOUR, Estimate, estimate
from pipelines.plans.estimate_text import format_estimate
from pipelines.plans.files import validate_budget
from pipelines.plans.methods import TRAINING_FLOPS_PER_PARAMETER
from pipelines.plans.schema import Budget, Method, flops_per_token
from pipelines.warehouse.scale import at_column_scale
from pipelines.warehouse.sql import dict_rows, read_sql

DEFAULT_SCALING_EFFICIENCY = Decimal("0.9")
"""Throughput per GPU kept when the run has more GPUs than the pilot (more communication per step);
1 when it has as many or fewer."""


TIME_SCALED_CATEGORIES = ("storage", "network")
"""The categories the new run pays what the pilot paid per wall-clock hour; the pilot's others are
left out (listed in the explanation)."""


class PilotError(ValueError):
    """The pilot cannot be scaled: unknown, without progress, or without a budget model."""


@dataclass(frozen=True)
class PilotMeasures:
    """What the pilot measured, from the warehouse.

    Attributes:
        training_run: the pilot.
        currency: its billing currency.
        tokens_trained: run_progress.tokens_trained.
        wall_clock_hours: run_progress.wall_clock_hours.
        tokens_per_gpu_second: run_progress.tokens_per_gpu_second, the throughput while training.
        gpu_hours: run_progress.gpu_hours, every compute GPU-hour billed to it.
        effective_mfu: run_progress.effective_mfu (None without gpu_peak_tflops).
        gpus: the GPUs of its latest start or resume event.
        compute_rate: budget_variance.actual_rate of its compute row.
        costs: its effective cost per cost category (run_costs, every billing period).
    """

    training_run: str
    currency: str
    tokens_trained: int
    wall_clock_hours: Decimal
    tokens_per_gpu_second: Decimal
    gpu_hours: Decimal
    effective_mfu: Decimal | None
    gpus: int
    compute_rate: Decimal
    costs: dict[str, Decimal]

    @property
    def overhead(self) -> Decimal:
        """Billed GPU-hours over the GPU-hours the tokens trained take at the measured throughput,
        minus 1: restarts, downtime, evaluation and idle GPUs, as a fraction."""
        with localcontext(prec=DECIMAL_PRECISION):
            training_gpu_hours = self.tokens_trained / (self.tokens_per_gpu_second * SECONDS_PER_HOUR)
            return at_column_scale(self.gpu_hours / training_gpu_hours - 1)


@dataclass(frozen=True)
class Target:
    """The larger run, as `runledger estimate --from-run` is asked for it; None keeps the pilot's.

    Attributes:
        training_run: the new run's id.
        start: the first day of its window.
        parameters: N (with `active_parameters` None, a dense model).
        active_parameters: the parameters used per token of a mixture of experts.
        method: the training method.
        tokens: the tokens it processes.
        gpus: its GPUs.
        scaling_efficiency: the throughput per GPU kept against the pilot's, in (0, 1]; None for
            `DEFAULT_SCALING_EFFICIENCY` (more GPUs than the pilot) or 1.
    """

    training_run: str
    start: date
    parameters: Decimal | None = None
    active_parameters: Decimal | None = None
    method: Method | None = None
    tokens: Decimal | None = None
    gpus: int | None = None
    scaling_efficiency: Decimal | None = None


@dataclass(frozen=True)
class ScaledEstimate:
    """The new run's budget, its estimate, and how it was derived."""

    budget: Budget
    estimate: Estimate
    document: dict[str, Any]
    explanation: list[str]

    def yaml_text(self) -> str:
        """The budget file: the explanation and the estimate as comments, then the budget."""
        comments = self.explanation + [""] + format_estimate(self.budget, self.estimate).splitlines()
        header = "\n".join(f"# {line}".rstrip() for line in comments)
        return f"{header}\n{yaml.safe_dump(self.document, sort_keys=False)}"

    def text(self) -> str:
        """The explanation and the estimate as `runledger estimate` prints them."""
        return "\n".join(self.explanation) + "\n\n" + format_estimate(self.budget, self.estimate)


def read_pilot(conn: duckdb.DuckDBPyConnection, training_run: str) -> PilotMeasures:
    """What a pilot run measured, read from the warehouse.

    Args:
        conn: a read-only warehouse connection.
        training_run: the pilot.

    Raises:
        PilotError: the warehouse knows no such run, or it has no progress (no run events, no
            throughput, no tokens trained or no compute GPU-hours).
    """
    rows = dict_rows(conn.execute(read_sql("reports/pilot_run", "measures"), {"training_run": training_run}))
    if not rows:
        known = [run for (run,) in conn.execute(read_sql("reports/known_runs")).fetchall()]
        if training_run not in known:
            close = difflib.get_close_matches(training_run, known, n=1)
            hint = f"did you mean {close[0]!r}? " if close else ""
            raise PilotError(
                f"--from-run {training_run}: no such run in the warehouse; {hint}give a run of "
                '`runledger query "select training_run from run_progress"`'
            )
        raise PilotError(
            f"--from-run {training_run}: the run has no progress (no run events in run_progress); add a "
            "run_events source with its start, checkpoint and end events and run `runledger run`"
        )
    measured = rows[0]
    missing = [
        column
        for column in (
            "currency",
            "tokens_trained",
            "wall_clock_hours",
            "tokens_per_gpu_second",
            "gpu_hours",
            "gpus",
            "compute_rate",
        )
        if measured[column] is None or measured[column] == 0
    ]
    if missing:
        raise PilotError(
            f"--from-run {training_run}: its progress has no {', '.join(missing)}; a pilot needs run events with "
            "steps and GPUs (`gpus` on its start or resume), its tokens trained (a budget with batch_size and "
            "sequence_length, or events giving tokens) and compute GPU-hours attributed to it"
        )
    costs = conn.execute(
        read_sql("reports/pilot_run", "categories"), {"training_run": training_run, "currency": measured["currency"]}
    ).fetchall()
    return PilotMeasures(**measured, costs=dict(costs))


def scale_pilot(pilot_budget: Budget, pilot: PilotMeasures, target: Target) -> ScaledEstimate:
    """The budget and estimate of a larger run from a pilot's budget and what it measured.

    Raises:
        PilotError: the pilot's budget has no model, the scaling efficiency is outside (0, 1], or
            the pilot billed fewer GPU-hours than its tokens take at its own throughput.
        BudgetError: the new budget breaks a budget rule (e.g. active parameters above the
            parameters).
    """
    model = pilot_budget.model
    if model is None:
        raise PilotError(
            f"--from-run {pilot.training_run}: its budget has no `model`, so its FLOPs per token are unknown; "
            "add the model section (parameters, tokens, method) to its budget file"
        )
    overhead = pilot.overhead
    if overhead < 0:
        raise PilotError(
            f"--from-run {pilot.training_run}: it was billed {pilot.gpu_hours:,.2f} compute GPU-hours, fewer than "
            f"its {pilot.tokens_trained:,} tokens trained take at its measured throughput; check its "
            "run events and attribution"
        )
    gpus = target.gpus if target.gpus is not None else pilot.gpus
    efficiency = target.scaling_efficiency
    if efficiency is None:
        efficiency = DEFAULT_SCALING_EFFICIENCY if gpus > pilot.gpus else Decimal(1)
    if not 0 < efficiency <= 1:
        raise PilotError(f"--scaling-efficiency must be in (0, 1], got {efficiency}")
    new_model: dict[str, Any] = {
        "method": target.method or model.method,
        "parameters": target.parameters if target.parameters is not None else model.parameters,
        "active_parameters": (
            target.active_parameters
            if target.active_parameters is not None or target.parameters is not None
            else model.active_parameters
        ),
        "tokens": target.tokens if target.tokens is not None else model.tokens,
    }
    new_flops_per_token = flops_per_token(new_model["method"], new_model["parameters"], new_model["active_parameters"])
    with localcontext(prec=DECIMAL_PRECISION):
        throughput = at_column_scale(
            pilot.tokens_per_gpu_second * model.flops_per_token / new_flops_per_token * efficiency
        )
    new_model |= {
        "gpu_peak_tflops": model.gpu_peak_tflops,
        "tokens_per_second_per_gpu": throughput,
        "overhead": overhead,
        "gpus": gpus,
        "gpu_hour_price": at_column_scale(pilot.compute_rate),
        "batch_size": model.batch_size,
        "sequence_length": model.sequence_length,
    }
    document: dict[str, Any] = {
        "training_run": target.training_run,
        "currency": pilot_budget.currency,
        "window": {"start": target.start, "end": target.start + timedelta(days=1)},
        "model": {key: value for key, value in new_model.items() if value is not None},
    }
    thresholds = {"warning": pilot_budget.thresholds.warning, "over": pilot_budget.thresholds.over}
    source = f"--from-run {pilot.training_run}"
    wall_hours = estimate(validate_budget(document | {"thresholds": thresholds}, source)).wall_hours
    days = max(1, math.ceil(wall_hours / 24))
    document["window"]["end"] = target.start + timedelta(days=days)
    with localcontext(prec=DECIMAL_PRECISION):
        per_hour = {
            category: pilot.costs[category] / pilot.wall_clock_hours
            for category in TIME_SCALED_CATEGORIES
            if pilot.costs.get(category)
        }
        fixed = {category: at_column_scale(rate * wall_hours) for category, rate in per_hour.items()}
    if fixed:
        document["fixed"] = fixed
    document["thresholds"] = thresholds
    budget = validate_budget(document, source)
    explanation = _explain(pilot_budget, pilot, budget, efficiency, per_hour, days)
    return ScaledEstimate(budget, estimate(budget), _plain(document), explanation)


def pilot_budget(budgets_with_files: list[tuple[Budget, Path]], training_run: str, folder: Path | None) -> Budget:
    """The pilot's budget among the budget files.

    Raises:
        PilotError: no budget file is for the pilot.
    """
    for budget, _ in budgets_with_files:
        if budget.training_run == training_run:
            return budget
    where = f"in {folder}" if folder is not None else "(no `budgets` folder in runledger.yaml)"
    raise PilotError(
        f"--from-run {training_run}: no budget for the run {where}; its budget's model (parameters, tokens, "
        f"method) is what the pilot is scaled from: add {training_run}.yaml to the budgets folder"
    )


def _plain(value: Any) -> Any:
    """A YAML-ready copy: a Decimal as an int or float when it reads back as the same Decimal,
    else as text (the budget reads text as the exact number)."""
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, Decimal):
        if value == value.to_integral_value():
            return int(value)
        as_float = float(value)
        return as_float if Decimal(repr(as_float)) == value else str(value)
    return value


def _explain(
    pilot_budget: Budget,
    pilot: PilotMeasures,
    budget: Budget,
    efficiency: Decimal,
    per_hour: dict[str, Decimal],
    days: int,
) -> list[str]:
    old, new = pilot_budget.model, budget.model
    lines = [
        f"{budget.training_run}: scaled from the pilot {pilot.training_run} (runledger estimate --from-run)",
        f"  pilot model              {_shape(old)} planned",
        f"  new model                {_shape(new)}",
        (
            f"  pilot throughput         {pilot.tokens_per_gpu_second:,.1f} tokens/s per GPU while training, "
            f"on {pilot.gpus:,} GPUs"
        ),
        (
            f"  pilot overhead           {pilot.overhead * 100:,.1f} %: {pilot.gpu_hours:,.2f} GPU-hours billed for "
            f"{pilot.tokens_trained:,} tokens trained"
        ),
    ]
    if pilot.effective_mfu is not None:
        lines.append(f"  pilot effective MFU      {pilot.effective_mfu * 100:,.1f} % (over every GPU-hour billed)")
    lines += [
        (
            f"  scaling efficiency       {efficiency} on {new.gpus:,} GPUs (pilot {pilot.gpus:,}; "
            "--scaling-efficiency to change it)"
        ),
        (
            f"  new throughput           {pilot.tokens_per_gpu_second:,.1f} x {old.flops_per_token:.4e} / "
            f"{new.flops_per_token:.4e} FLOPs per token x {efficiency} = {new.tokens_per_second_per_gpu:,.1f}"
        ),
        f"  compute rate             {new.gpu_hour_price:,.4f} {budget.currency} per GPU-hour (the pilot's actual)",
    ]
    for category, rate in per_hour.items():
        lines.append(
            f"  {category:<25}{rate:,.4f} {budget.currency} per wall-clock hour (the pilot's "
            f"{pilot.costs[category]:,.2f} over {pilot.wall_clock_hours:,.2f} h)"
        )
    left_out = [
        f"{category} {cost:,.2f}"
        for category, cost in pilot.costs.items()
        if category != "compute" and category not in TIME_SCALED_CATEGORIES and cost
    ]
    if left_out:
        lines.append(f"  not carried over         the pilot's {', '.join(left_out)}: add what applies under `fixed:`")
    lines.append(f"  window                   {budget.window.start} + {days} days: edit it to the planned dates")
    return lines


def _shape(model: Any) -> str:
    size = f"{model.parameters:.3e} parameters"
    if model.active_parameters is not None:
        size += f" ({model.active_parameters:.3e} active)"
    factor = TRAINING_FLOPS_PER_PARAMETER[model.method]
    flops = f"{factor} N = {model.flops_per_token:.4e} FLOPs per token"
    return f"{size}, {model.method} ({flops}), {model.tokens:.3e} tokens"
