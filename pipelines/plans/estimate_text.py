"""The plain-text estimate table `runledger estimate` prints."""

from __future__ import annotations

from decimal import Decimal

from pipelines.plans.estimate import Estimate
from pipelines.plans.methods import TRAINING_FLOPS_PER_PARAMETER
from pipelines.plans.schema import Budget, ResourceModel, cost_behavior


def format_estimate(budget: Budget, estimate: Estimate) -> str:
    """Renders an estimate as the plain-text table `runledger estimate` prints: each cost line
    with its amount and whether it is fixed or elastic."""
    lines = [
        (
            f"Estimate for {budget.training_run}: window {budget.window.start} to "
            f"{budget.window.end}, amounts in {budget.currency}"
        ),
        "",
    ]
    if budget.model is not None:
        lines += _resource_lines(budget.model, estimate)
    lines.append(f"  {'cost category':<28}{budget.currency:>20}")
    for category, cost in estimate.costs.items():
        lines.append(f"  {category:<28}{_money(cost):>20}  {cost_behavior(category, budget.fixed)}")
        if category == "storage" and estimate.node_volume_cost is not None:
            lines.append(_node_volume_line(budget, estimate.node_volume_cost))
    lines.append(f"  {'total':<28}{_money(estimate.total):>20}")
    if estimate.cost_per_billion_tokens is not None:
        lines.append(f"  {'cost per 1e9 tokens':<28}{_money(estimate.cost_per_billion_tokens):>20}")
    return "\n".join(lines) + "\n"


def _resource_lines(model: ResourceModel, estimate: Estimate) -> list[str]:
    days = estimate.wall_hours / 24
    mfu_source = "given" if model.mfu is not None else "implied by the throughput"
    throughput_source = "given" if model.tokens_per_second_per_gpu is not None else "implied by MFU"
    if model.active_parameters is None:
        lines = [f"  {'parameters (N)':<28}{model.parameters:>20.3e}"]
    else:
        lines = [
            f"  {'parameters':<28}{model.parameters:>20.3e}  (in all)",
            f"  {'active parameters (N)':<28}{model.active_parameters:>20.3e}  (used per token)",
        ]
    lines.append(f"  {'tokens (D)':<28}{model.tokens:>20.3e}")
    if estimate.steps is not None:
        lines.append(
            f"  {'training steps':<28}{estimate.steps:>20,}  ({estimate.tokens_per_step:,} tokens "
            f"per step: batch {model.batch_size:,} x sequence {model.sequence_length:,})"
        )
    factor = TRAINING_FLOPS_PER_PARAMETER[model.method]
    flops_line = f"  {f'training FLOPs ({factor} N D)':<28}{estimate.flops:>20.3e}"
    lines.append(flops_line if model.method == "pretrain" else f"{flops_line}  ({model.method})")
    if estimate.mfu is not None:
        lines.append(
            f"  {'MFU':<28}{_percent(estimate.mfu):>20}  ({mfu_source}; peak "
            f"{model.gpu_peak_tflops:,f} TFLOP/s per GPU)"
        )
    lines += [
        f"  {'tokens per second per GPU':<28}{estimate.tokens_per_second_per_gpu:>20,.1f}  ({throughput_source})",
        f"  {'overhead':<28}{_percent(model.overhead):>20}  (restarts, evaluation, idle)",
    ]
    if estimate.effective_mfu is not None:
        lines.append(
            f"  {'effective MFU':<28}{_percent(estimate.effective_mfu):>20}  (over every GPU-hour, overhead included)"
        )
    lines += [
        f"  {'GPU-hours':<28}{estimate.gpu_hours:>20,.2f}",
        f"  {'wall-clock hours':<28}{estimate.wall_hours:>20,.2f}  ({days:,.2f} days on {model.gpus:,} GPUs)",
        "",
    ]
    return lines


def _node_volume_line(budget: Budget, cost: Decimal) -> str:
    storage, model = budget.storage, budget.model
    return (
        f"    {'of which node volumes':<26}{_money(cost):>20}  ({model.nodes:,} nodes x {storage.node_volume_gb:,f} GB "
        f"at {storage.volume_price:f} per GB-month)"
    )


def _percent(fraction: Decimal) -> str:
    return f"{fraction * 100:,.1f} %"


def _money(amount: Decimal) -> str:
    return f"{amount:,.2f}"
