"""The resource model: a budget's pre-training estimate (FLOPs per token x tokens, MFU, GPU-hours,
wall-clock, storage and network costs) and the `budget_baselines` rows it gives.

Pure Python, no warehouse access. Estimates are computed at 60 significant digits; money and hours
are quantized to 10 decimal places with ROUND_HALF_EVEN, the scale of the warehouse's
DECIMAL(38, 10).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import Decimal, localcontext
from fractions import Fraction
from pathlib import Path
from typing import Any

from pipelines.plans.schema import (
    Budget,
    InvalidValue,
    ResourceModel,
    cost_behavior,
)
from pipelines.plans.settings import AlertThresholds
from pipelines.sources.mappings import COST_CATEGORIES
from pipelines.warehouse.decimal_text import AMOUNT_LIMIT
from pipelines.warehouse.scale import PRECISION, at_column_scale

HOURS_PER_MONTH = Decimal(730)
SECONDS_PER_HOUR = Decimal(3600)
TERA = Decimal(10) ** 12
BILLION = Decimal(10) ** 9
DECIMAL_PRECISION = PRECISION


@dataclass(frozen=True)
class Estimate:
    """The resource model's pre-training estimate of one budget.

    Every field but `costs` and `total` is None without `model`.

    Attributes:
        flops: training FLOPs, the model's FLOPs per token x tokens (6 N D for pre-training).
        gpu_hours: GPU-hours including overhead, quantized.
        wall_hours: gpu_hours / gpus, quantized: the wall-clock time of the run.
        costs: estimated cost per category present in the budget, in `COST_CATEGORIES` order.
        total: sum of `costs`.
        cost_per_billion_tokens: total / (tokens / 1e9), quantized.
        mfu: the given MFU, or the one implied by the given throughput and peak (None without
            `gpu_peak_tflops`).
        tokens_per_second_per_gpu: the given throughput, or the one implied by the given MFU.
        gpu_hours_at_peak: the GPU-hours the FLOPs take at the full peak (MFU 1, no overhead);
            None without `gpu_peak_tflops`.
        effective_mfu: gpu_hours_at_peak / gpu_hours, the MFU over every estimated GPU-hour
            (overhead included), comparable with budget_variance.actual_effective_mfu.
        tokens_per_step: batch_size x sequence_length; None without them.
        steps: optimizer steps, tokens / tokens_per_step rounded up; None without them.
        node_volume_cost: the part of the storage cost that is the nodes' volumes; None without
            `storage.node_volume_gb`.
    """

    flops: Decimal | None
    gpu_hours: Decimal | None
    wall_hours: Decimal | None
    costs: dict[str, Decimal]
    total: Decimal
    cost_per_billion_tokens: Decimal | None
    mfu: Decimal | None = None
    tokens_per_second_per_gpu: Decimal | None = None
    gpu_hours_at_peak: Decimal | None = None
    effective_mfu: Decimal | None = None
    tokens_per_step: int | None = None
    steps: int | None = None
    node_volume_cost: Decimal | None = None


@dataclass(frozen=True)
class _Speed:
    mfu: Decimal | None
    tokens_per_second_per_gpu: Decimal
    gpu_hours_at_peak: Decimal | None
    ideal_gpu_hours: Decimal


def estimate(budget: Budget) -> Estimate:
    """Applies the resource model to a budget.

    With `mfu`: GPU-hours = F D / (peak x 1e12 x mfu x 3600) x (1 + overhead), F the training
    FLOPs per token (`ResourceModel.flops_per_token`, 6 N for pre-training). With
    `tokens_per_second_per_gpu`: GPU-hours = tokens / (throughput x 3600) x (1 + overhead).

    Raises:
        InvalidValue: an estimated quantity the budget tables store (GPU-hours, a category's cost,
            the total) is 10^15 or more, beyond what RunLedger holds (`AMOUNT_LIMIT`); its key is
            the section that derives it.
    """
    with localcontext(prec=DECIMAL_PRECISION):
        costs: dict[str, Decimal] = {}
        if budget.network is not None:
            costs["network"] = at_column_scale(budget.network.egress_gb * budget.network.price_gb)
        costs.update({category: at_column_scale(amount) for category, amount in budget.fixed.items()})
        model = budget.model
        if model is None:
            ordered = _storable_costs(_ordered(costs))
            total = _storable(sum(ordered.values(), Decimal(0)), "total cost", "fixed")
            return Estimate(None, None, None, ordered, total, None)
        flops = model.flops_per_token * model.tokens
        speed = _speed(model, flops)
        gpu_hours = _storable(at_column_scale(speed.ideal_gpu_hours * (1 + model.overhead)), "GPU-hours", "model")
        if speed.gpu_hours_at_peak is not None:
            _storable(speed.gpu_hours_at_peak, "GPU-hours at peak", "model")
        wall_hours = at_column_scale(gpu_hours / model.gpus)
        costs["compute"] = at_column_scale(gpu_hours * model.gpu_hour_price)
        node_volume_cost = None
        if budget.storage is not None:
            stored_monthly = budget.storage.checkpoint_gb * budget.storage.checkpoints_retained
            stored_monthly = (stored_monthly + budget.storage.dataset_gb) * budget.storage.price_gb_month
            volume_monthly = budget.storage.node_volume_gb * model.nodes * budget.storage.volume_price
            costs["storage"] = _per_wall_hours(stored_monthly + volume_monthly, wall_hours)
            if budget.storage.node_volume_gb:
                node_volume_cost = _per_wall_hours(volume_monthly, wall_hours)
        ordered = _storable_costs(_ordered(costs))
        total = _storable(sum(ordered.values(), Decimal(0)), "total cost", "fixed")
        tokens_per_step = steps = None
        if model.batch_size is not None and model.sequence_length is not None:
            tokens_per_step = model.batch_size * model.sequence_length
            steps = math.ceil(Fraction(model.tokens) / tokens_per_step)
        return Estimate(
            flops=flops,
            gpu_hours=gpu_hours,
            wall_hours=wall_hours,
            costs=ordered,
            total=total,
            cost_per_billion_tokens=at_column_scale(total / (model.tokens / BILLION)),
            mfu=at_column_scale(speed.mfu) if speed.mfu is not None else None,
            tokens_per_second_per_gpu=at_column_scale(speed.tokens_per_second_per_gpu),
            gpu_hours_at_peak=(
                at_column_scale(speed.gpu_hours_at_peak) if speed.gpu_hours_at_peak is not None else None
            ),
            effective_mfu=(
                at_column_scale(speed.gpu_hours_at_peak / gpu_hours)
                if speed.gpu_hours_at_peak is not None and gpu_hours
                else None
            ),
            tokens_per_step=tokens_per_step,
            steps=steps,
            node_volume_cost=node_volume_cost,
        )


def baseline_rows(
    budget: Budget, source_file: Path | str, defaults: AlertThresholds | None = None
) -> list[dict[str, Any]]:
    """One `budget_baselines` row per estimated category of a budget.

    Only the compute row derived from `model` carries estimated_gpu_hours and estimated_rate
    (= gpu_hour_price), training_tokens and gpu_hours_at_peak (for the actual effective MFU and
    throughput) and tokens_per_step (for the tokens trained); its estimated_cost is
    round(estimated_gpu_hours x estimated_rate, 10). Only the
    storage row of a budget with `storage` carries checkpoints_retained (for the waste analysis).
    Every row carries the budget's checkpoint_write_seconds (for the checkpoint_interval recommendation).
    Every row says its cost_behavior (`schema.cost_behavior`): the `fixed:` lines are fixed, the
    lines the sections derive elastic.
    Every Decimal is quantized to 10 places (DuckDB misreads bound Decimals with a positive
    exponent such as Decimal('1.2E+4')).

    Every row carries the run's levels of the thresholds besides cost (`alert_levels`).

    Args:
        budget: the validated budget.
        source_file: the budget's file, stored as `budget_file`.
        defaults: runledger.yaml's `thresholds:`; None: its defaults.
    """
    result = estimate(budget)
    thresholds = {
        "warning": at_column_scale(budget.thresholds.warning),
        "over": at_column_scale(budget.thresholds.over),
    }
    levels = alert_levels(budget, defaults or AlertThresholds())
    window = {"start": budget.window.start, "end": budget.window.end}
    rows = []
    gpu_hour_price = at_column_scale(budget.model.gpu_hour_price) if budget.model is not None else None
    write_seconds = at_column_scale(budget.checkpoint_write_seconds) if budget.checkpoint_write_seconds else None
    for category, cost in result.costs.items():
        derived_compute = category == "compute" and budget.model is not None
        rows.append(
            {
                "training_run": budget.training_run,
                "cost_category": category,
                "cost_behavior": cost_behavior(category, budget.fixed),
                "currency": budget.currency,
                "estimated_cost": cost,
                "estimated_gpu_hours": result.gpu_hours if derived_compute else None,
                "estimated_rate": gpu_hour_price if derived_compute else None,
                "training_tokens": at_column_scale(budget.model.tokens) if derived_compute else None,
                "gpu_hours_at_peak": result.gpu_hours_at_peak if derived_compute else None,
                "tokens_per_step": result.tokens_per_step if derived_compute else None,
                "estimated_wall_clock_hours": result.wall_hours if derived_compute else None,
                "checkpoints_retained": (
                    budget.storage.checkpoints_retained if category == "storage" and budget.storage else None
                ),
                "checkpoint_write_seconds": write_seconds,
                "thresholds": thresholds,
                **levels,
                "window": window,
                "budget_file": str(source_file),
            }
        )
    return rows


ALERT_KINDS = ("gpu_hours", "wall_clock", "storage", "daily_spend_anomaly")
"""The threshold kinds besides cost a budget can set; each is a `<kind>_thresholds` column."""
HOURLY_ALERT_KINDS = ("low_gpu_utilization", "data_loading_share")
"""The threshold kinds judged on a run's hourly telemetry, each a `<kind>_thresholds` column with
its `hours`: the budget's own levels, else runledger.yaml's (which have defaults)."""


def alert_levels(budget: Budget, defaults: AlertThresholds) -> dict[str, dict[str, Decimal]]:
    """The run's warning and over levels of each threshold kind besides cost: the budget's own,
    else runledger.yaml's, else (GPU-hours, wall-clock, storage) the budget's cost fractions.

    Returns:
        `{"<kind>_thresholds": {"warning": ..., "over": ...}}` for every kind of ALERT_KINDS, and
        with `"hours"` for every kind of HOURLY_ALERT_KINDS.
    """
    levels = {}
    for kind in ALERT_KINDS:
        chosen = getattr(budget.thresholds, kind) or getattr(defaults, kind) or budget.thresholds
        levels[f"{kind}_thresholds"] = {
            "warning": at_column_scale(chosen.warning),
            "over": at_column_scale(chosen.over),
        }
    for kind in HOURLY_ALERT_KINDS:
        chosen = getattr(budget.thresholds, kind) or getattr(defaults, kind)
        levels[f"{kind}_thresholds"] = {
            "warning": at_column_scale(chosen.warning),
            "over": at_column_scale(chosen.over),
            "hours": chosen.hours,
        }
    return levels


def _speed(model: ResourceModel, flops: Decimal) -> _Speed:
    """The model's speed both ways (MFU and tokens per second per GPU), whichever was given."""
    peak_flops_per_gpu_second = model.gpu_peak_tflops * TERA if model.gpu_peak_tflops is not None else None
    gpu_hours_at_peak = (
        flops / (peak_flops_per_gpu_second * SECONDS_PER_HOUR) if peak_flops_per_gpu_second is not None else None
    )
    flops_per_token = model.flops_per_token
    if model.mfu is not None:
        throughput = model.mfu * peak_flops_per_gpu_second / flops_per_token
        return _Speed(model.mfu, throughput, gpu_hours_at_peak, gpu_hours_at_peak / model.mfu)
    throughput = model.tokens_per_second_per_gpu
    implied_mfu = (
        throughput * flops_per_token / peak_flops_per_gpu_second if peak_flops_per_gpu_second is not None else None
    )
    return _Speed(implied_mfu, throughput, gpu_hours_at_peak, model.tokens / (throughput * SECONDS_PER_HOUR))


def _per_wall_hours(price_per_month: Decimal, wall_hours: Decimal) -> Decimal:
    """A monthly storage price (GB x price per GB-month) over the run's wall-clock hours."""
    return at_column_scale(price_per_month * wall_hours / HOURS_PER_MONTH)


def _ordered(costs: dict[str, Decimal]) -> dict[str, Decimal]:
    return {category: costs[category] for category in COST_CATEGORIES if category in costs}


def _storable_costs(costs: dict[str, Decimal]) -> dict[str, Decimal]:
    keys = {"compute": "model", "storage": "storage", "network": "network"}
    for category, cost in costs.items():
        _storable(cost, f"{category} cost", keys.get(category, f"fixed.{category}"))
    return costs


def _storable(value: Decimal, quantity: str, key: str) -> Decimal:
    """The value, when it is below `AMOUNT_LIMIT` (the limit of `schema.require_storable`, here
    for a quantity the estimate derives)."""
    if abs(value) >= AMOUNT_LIMIT:
        raise InvalidValue(
            f"the estimated {quantity} is {value:.3E}, but RunLedger holds numbers below 10^15; check the numbers "
            "of this section for a wrong unit or exponent (docs/semantics.md#amounts)",
            key=key,
        )
    return value
