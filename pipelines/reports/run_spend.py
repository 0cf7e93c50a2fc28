"""Where a run's money went: daily spend by category, its top resources, its waste, and the
unattributed spend in the accounts it used."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import date
from decimal import Decimal

from pipelines.reports.charts import NO_RESOURCE_ID, ordered_categories
from pipelines.reports.data import (
    DailySpend,
    OutsideWindow,
    RunDetails,
    TopResources,
    UnattributedInAccounts,
    VarianceCause,
)
from pipelines.reports.document import (
    MISSING,
    Block,
    Cell,
    Paragraph,
    Table,
    billing_period_label,
    hours,
    money,
    percent,
    text_cell,
    timestamp,
)
from pipelines.reports.run_causes import AT_ESTIMATED_RATE, cause_label
from pipelines.reports.run_facts import WASTE_NOTE

# how the waste kinds that are also waterfall steps are priced (methods in sql/marts/waste.sql)
WASTE_PRICING = {
    "idle_after_run": "as billed",
    "recompute_after_failure": "at the run's actual rate",
}


def daily_table(daily: Sequence[DailySpend], currency: str) -> Table:
    """Spend per charge day and category, each day's total and the cumulative spend, then the totals."""
    categories = ordered_categories(spend.cost_category for spend in daily)
    by_day: dict[date, dict[str, Decimal]] = {}
    for spend in daily:
        by_day.setdefault(spend.charge_day, {})[spend.cost_category] = spend.effective_cost
    rows = []
    cumulative = Decimal(0)
    for day in sorted(by_day):
        day_total = sum(by_day[day].values(), Decimal(0))
        cumulative += day_total
        rows.append(
            (
                Cell(f"{day:%Y-%m-%d}"),
                *(Cell(money(by_day[day].get(category))) for category in categories),
                Cell(money(day_total)),
                Cell(money(cumulative)),
            )
        )
    totals = [
        sum((spend.effective_cost for spend in daily if spend.cost_category == category), Decimal(0))
        for category in categories
    ]
    rows.append((Cell("Total"), *(Cell(money(value)) for value in totals), Cell(money(cumulative)), Cell("")))
    return Table(
        columns=("Charge day (UTC)", *categories, f"Day total ({currency})", f"Cumulative ({currency})"),
        rows=tuple(rows),
        numeric_columns=frozenset(range(1, len(categories) + 3)),
        emphasized_rows=1,
    )


def top_resource_blocks(resources: TopResources, currency: str) -> tuple[Block, ...]:
    """The run's largest resources by effective cost, ranked."""
    if not resources.top:
        return (Paragraph("No attributed spend yet."),)
    intro = Paragraph(
        f"The largest {len(resources.top)} of the {resources.resource_rows} resources the run was "
        "charged for, by effective cost over all its billing periods."
    )
    rows = [
        (
            Cell(str(rank)),
            text_cell(resource.provider),
            text_cell(resource.service),
            Cell(resource.resource or NO_RESOURCE_ID),
            text_cell(resource.cost_category),
            Cell(money(resource.effective_cost)),
            Cell(hours(resource.gpu_hours) if resource.gpu_hours else MISSING),
            Cell(percent(resource.share_of_run)),
        )
        for rank, resource in enumerate(resources.top, start=1)
    ]
    table = Table(
        columns=(
            "#",
            "Provider",
            "Service",
            "Resource",
            "Category",
            f"Effective cost ({currency})",
            "GPU-hours",
            "Share of run",
        ),
        rows=tuple(rows),
        numeric_columns=frozenset({0, 5, 6, 7}),
        wrapping_columns=frozenset({2, 3}),
    )
    return intro, table


def waste_blocks(
    details: RunDetails, currency: str, at_estimated_rate: Mapping[str, VarianceCause] | None = None
) -> tuple[Block, ...]:
    """The run's waste per kind, its largest items and how each kind is computed.

    Args:
        details: the run's waste.
        currency: its currency.
        at_estimated_rate: the run's waterfall steps priced at the estimated rate, by cause
            (`estimated_rate_causes`): the kinds of the same name say how they are priced instead.
    """
    waste = details.waste
    same_hours = {
        kind.kind: at_estimated_rate[kind.kind] for kind in waste.kinds if kind.kind in (at_estimated_rate or {})
    }
    if waste.effective_cost == 0:
        return (
            Paragraph(
                "No waste found: no spend after the run's end, no failure to recompute, no checkpoints "
                "beyond the budget, no inter-region transfer, no repeated experiment and no monitoring "
                "beyond its estimate (kinds that need run events or a budget count only with them)."
            ),
            Paragraph(WASTE_NOTE),
        )
    kinds = Table(
        columns=("Kind", "Items", f"Effective cost ({currency})", "GPU-hours", "Share of run"),
        rows=tuple(
            (
                Cell(
                    kind.kind.replace("_", " ") + (f" ({WASTE_PRICING[kind.kind]})" if kind.kind in same_hours else "")
                ),
                Cell(str(kind.items)),
                Cell(money(kind.effective_cost)),
                Cell(hours(kind.gpu_hours) if kind.gpu_hours else MISSING),
                Cell(percent(kind.share_of_run)),
            )
            for kind in waste.kinds
        ),
        numeric_columns=frozenset({1, 2, 3, 4}),
    )
    top = Table(
        columns=("#", "Kind", "Category", f"Effective cost ({currency})", "GPU-hours", "Detail"),
        rows=tuple(
            (
                Cell(str(rank)),
                Cell(item.kind.replace("_", " ")),
                text_cell(item.cost_category),
                Cell(money(item.effective_cost)),
                Cell(hours(item.gpu_hours) if item.gpu_hours else MISSING),
                text_cell(item.detail),
            )
            for rank, item in enumerate(waste.top, start=1)
        ),
        numeric_columns=frozenset({0, 3, 4}),
        wrapping_columns=frozenset({5}),
    )
    methods = Paragraph(
        "How each kind is computed: "
        + "; ".join(f"{kind.kind.replace('_', ' ')}: {kind.method}" for kind in waste.kinds if kind.items)
        + "."
    )
    intro = Paragraph(f"The largest {len(waste.top)} waste items of the run:")
    pricing = (_pricing_note(same_hours),) if same_hours else ()
    return kinds, *pricing, intro, top, methods, Paragraph(WASTE_NOTE)


def _pricing_note(same_hours: Mapping[str, VarianceCause]) -> Paragraph:
    """How the waste and the variance waterfall price the same hours."""
    steps = ", ".join(
        f"{cause_label(cause)} {money(cause.amount, signed=True)} ({hours(cause.gpu_hours)} GPU-hours)"
        for cause in same_hours.values()
    )
    kinds = " and ".join(f"{kind.replace('_', ' ')} {WASTE_PRICING[kind]}" for kind in same_hours)
    return Paragraph(
        f"The variance waterfall prices the same hours {AT_ESTIMATED_RATE}: {steps}. This table shows what "
        f"they cost: {kinds}."
    )


def unattributed_blocks(
    unattributed: UnattributedInAccounts, outside_window: Sequence[OutsideWindow] = ()
) -> tuple[Block, ...]:
    """The largest untagged resources (unattributed, taggable) in the run's accounts and billing
    periods, then the resources the run's registry entry names charged outside its window."""
    outside = _outside_window_blocks(outside_window)
    if not unattributed.top:
        return (Paragraph("No untagged resources in the accounts this run used, in its billing periods."), *outside)
    currencies = sorted({row.currency for row in unattributed.top if row.currency})
    intro = Paragraph(
        f"{unattributed.resource_rows} untagged resource rows (no run, taggable) in the accounts this run used, "
        f"in its billing periods, total {money(unattributed.effective_cost)} {', '.join(currencies)}; the "
        f"largest {len(unattributed.top)} by effective cost. Tagging them moves their cost to runs."
    )
    rows = [
        (
            text_cell(row.provider),
            text_cell(row.account),
            text_cell(row.service),
            text_cell(row.resource),
            Cell(billing_period_label(row.billing_period)),
            text_cell(row.cost_category),
            Cell(money(row.effective_cost)),
            Cell(percent(row.share_of_period)),
        )
        for row in unattributed.top
    ]
    table = Table(
        columns=(
            "Provider",
            "Account",
            "Service",
            "Resource",
            "Billing period",
            "Category",
            f"Effective cost ({', '.join(currencies)})",
            "Share of period",
        ),
        rows=tuple(rows),
        numeric_columns=frozenset({6, 7}),
        wrapping_columns=frozenset({2, 3}),
    )
    return intro, table, *outside


def _outside_window_blocks(outside_window: Sequence[OutsideWindow]) -> tuple[Block, ...]:
    """The run's registered resources charged outside its window: not untagged, so not advice to tag."""
    if not outside_window:
        return ()
    intro = Paragraph(
        "Outside the run's registered window: the run registry names these resources for this run, "
        "but they were also charged outside its window. That spend is attributed to no run (rule "
        "outside registry window); it is not untagged, and tagging is not what it lacks."
    )
    table = Table(
        columns=("Resource", "Charged outside the window (UTC)", "Currency", "Effective cost"),
        rows=tuple(
            (
                Cell(row.resource),
                Cell(f"{timestamp(row.first_charge)} to {timestamp(row.last_charge)}"),
                text_cell(row.currency),
                Cell(money(row.effective_cost)),
            )
            for row in outside_window
        ),
        numeric_columns=frozenset({3}),
        wrapping_columns=frozenset({0}),
    )
    return intro, table
