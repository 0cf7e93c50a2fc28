"""Why a run is over or under its estimate, from its `variance_causes`: the waterfall's steps
(estimate → rate causes → usage causes → other categories → actual) and the one paragraph that
opens its report, the summary and `runledger run`'s output."""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal

from pipelines.reports.charts import ordered_categories, waterfall_steps
from pipelines.reports.data import RunOverview, VarianceCause
from pipelines.reports.document import money, percent
from pipelines.reports.run_economics import PRICING_NAMES

WHY_CAUSES = 3
CAUSES_NOTE = (
    "The steps are the variance's causes (variance_causes): the compute rate split into GPU-hours "
    "bought another way than the planned pricing and the planned pricing's price; the compute usage "
    "into idle after the end, recompute after failures and restart downtime (their GPU-hours at the "
    "estimated rate), tokens trained against the plan, and throughput, the rest; then each other "
    "category. Rate and usage causes of 0 are left out."
)
SPLIT_PARENTS = ("rate", "usage")
# causes whose own split the reports tell in words, not as waterfall steps: throughput's
# input_bound and compute_throughput (a run with step timings)
DETAILED_CAUSES = ("throughput",)
CAUSE_LABELS = {
    "idle_after_run": "idle after the end",
    "recompute_after_failure": "recompute after failures",
    "restart_downtime": "restart downtime",
}
# the usage causes that are GPU-hours priced at the estimated rate; waste has idle and recompute too,
# at what they cost
ESTIMATED_RATE_CAUSES = frozenset(CAUSE_LABELS)
AT_ESTIMATED_RATE = "at the estimated rate"


def leaf_causes(causes: Sequence[VarianceCause]) -> list[VarianceCause]:
    """The causes with no causes of their own (throughput counted as one), in the waterfall's
    order: rate's, usage's, then the other categories in the reports' category order."""
    parents = {cause.parent for cause in causes} - set(DETAILED_CAUSES)
    leaves = [cause for cause in causes if cause.cause not in parents and cause.parent not in DETAILED_CAUSES]
    split = [cause for cause in leaves if cause.parent in SPLIT_PARENTS]
    by_category = {cause.cause: cause for cause in leaves if cause.parent not in SPLIT_PARENTS}
    return split + [by_category[name] for name in ordered_categories(by_category)]


def cause_label(cause: VarianceCause, causes: Sequence[VarianceCause] = ()) -> str:
    """A cause as the reports name it, e.g. `on-demand GPU-hours`, `slower throughput`; a run's
    throughput while its tokens trained are unknown (its `scope` has no GPU-hours among `causes`)
    is only its GPU-hours against the plan."""
    pricing = PRICING_NAMES.get(cause.pricing or "", cause.pricing or "compute")
    if cause.cause == "pricing_mix":
        return f"{pricing} GPU-hours"
    if cause.cause == "price":
        return f"{pricing} price"
    if cause.cause == "scope":
        return f"{'fewer' if cause.amount < 0 else 'more'} tokens than planned"
    if cause.cause == "throughput":
        if any(other.cause == "scope" and other.gpu_hours is None for other in causes):
            return f"{'fewer' if cause.amount < 0 else 'more'} GPU-hours than planned"
        return f"{'faster' if cause.amount < 0 else 'slower'} throughput"
    return CAUSE_LABELS.get(cause.cause, cause.cause)


def variance_steps(overview: RunOverview, *, with_rates: bool = False) -> list[tuple[str, Decimal]]:
    """The waterfall's steps from the estimate to the actual: each leaf cause (rate's and usage's
    causes of 0 left out), or the compute rate, usage and categories while the run has no causes.

    Args:
        overview: the run's numbers and causes.
        with_rates: name the estimated rate in the steps priced at it (for the table beside the
            waste, which shows some of the same hours at what they cost).
    """
    if not overview.causes:
        return waterfall_steps(overview.categories)
    return [
        (
            cause_label(cause, overview.causes)
            + (f" ({AT_ESTIMATED_RATE})" if with_rates and cause.cause in ESTIMATED_RATE_CAUSES else ""),
            cause.amount,
        )
        for cause in leaf_causes(overview.causes)
        if cause.amount != 0 or cause.parent not in SPLIT_PARENTS
    ]


def estimated_rate_causes(overview: RunOverview) -> dict[str, VarianceCause]:
    """The run's causes of a waterfall step priced at the estimated rate, by cause (none without a
    budget), for the waste section to say how its amounts of the same hours differ."""
    return {cause.cause: cause for cause in overview.causes if cause.cause in ESTIMATED_RATE_CAUSES and cause.amount}


def why_paragraph(overview: RunOverview) -> str | None:
    """The run's variance with its percentage, over or under the estimate, then its three largest
    causes by absolute amount, each with its amount and evidence; None for a run without causes
    (no budget)."""
    if not overview.causes or overview.total.variance is None:
        return None
    total = overview.total
    largest = sorted((cause for cause in leaf_causes(overview.causes) if cause.amount != 0), key=_size)[:WHY_CAUSES]
    if total.variance == 0 and not largest:
        return "On the estimate."
    side = "under" if total.variance < 0 else "over"
    ratio = None if total.variance_ratio is None else abs(total.variance_ratio)
    head = f"{money(abs(total.variance))} ({percent(ratio)}) {side} the estimate."
    if not largest:
        return head
    parts = [
        f"{cause_label(cause, overview.causes)} {money(cause.amount, signed=True)}"
        + (f" ({cause.evidence})" if cause.evidence else "")
        for cause in largest
    ]
    return (
        f"{head} The largest cause{'s' if len(parts) > 1 else ''}: "
        + "; ".join(parts)
        + "."
        + _input_bound_sentence(overview.causes)
    )


def _input_bound_sentence(causes: Sequence[VarianceCause]) -> str:
    """Where step timings split the throughput cause: how much of it was steps waiting for data."""
    throughput = next((cause for cause in causes if cause.cause == "throughput"), None)
    input_bound = next((cause for cause in causes if cause.cause == "input_bound"), None)
    if throughput is None or input_bound is None or input_bound.amount == 0:
        return ""
    share = f" ({percent(input_bound.amount / throughput.amount)} of it)" if throughput.amount > 0 else ""
    return (
        f" Of the {cause_label(throughput, causes)}, {money(input_bound.amount)}{share} is time the GPUs "
        f"spent waiting for data: {input_bound.evidence}."
    )


def _size(cause: VarianceCause) -> Decimal:
    return -abs(cause.amount)
