"""The budget sections of a run's report: spend against the budget's levels, estimate vs actual
by category (actual alone without a budget), the variance waterfall and the compute split."""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal

from pipelines.reports.charts import ordered_categories
from pipelines.reports.data import BudgetAlert, CostLine, RunOverview
from pipelines.reports.document import (
    MISSING,
    Block,
    Cell,
    Paragraph,
    Table,
    hours,
    money,
    percent,
    rate,
    status_cell,
    timestamp,
)
from pipelines.reports.run_causes import variance_steps
from pipelines.reports.run_facts import as_of, currency_of

VARIANCE_SPLIT_NOTE = (
    "Rate variance = (actual rate − estimated rate) × actual GPU-hours; usage variance = "
    "(actual GPU-hours − estimated GPU-hours) × estimated rate. Together they are the compute "
    "variance."
)


def compute_blocks(overview: RunOverview) -> tuple[Block, ...]:
    """The compute split (GPU-hours, rate, cost) and, when it has one, how its rate and usage
    variances are computed; nothing when the run has no compute."""
    compute = next((line for line in overview.categories if line.cost_category == "compute"), None)
    if compute is None:
        return ()
    table = _compute_table(compute, currency_of(overview), has_budget=overview.header.has_budget)
    return (table, Paragraph(VARIANCE_SPLIT_NOTE)) if compute.rate_variance is not None else (table,)


def levels_table(overview: RunOverview, alerts: Sequence[BudgetAlert]) -> Table:
    """The chart's lines in numbers: the spend so far and, with a budget, the estimate, the
    thresholds with the day each was first reached, and the forecast."""
    header, total = overview.header, overview.total
    currency = currency_of(overview)
    estimate = total.estimated_cost if header.has_budget else None

    def share(amount: Decimal | None) -> Cell:
        return Cell(percent(amount / estimate if estimate and amount is not None else None))

    actual = (
        Cell(f"Actual so far (as of {timestamp(as_of(overview))})"),
        Cell(money(total.actual_cost)),
        share(total.actual_cost),
        Cell(MISSING),
        Cell(MISSING),
    )
    rows: list[tuple[Cell, ...]] = []
    if header.has_budget:
        rows.append((Cell("Estimate (budget)"), Cell(money(estimate)), share(estimate), Cell(MISSING), Cell(MISSING)))
        crossed = {alert.threshold: alert for alert in alerts}
        for name, fraction in (("warning", header.warning_threshold), ("over", header.over_threshold)):
            if fraction is None:
                continue
            alert = crossed.get(name)
            rows.append(
                (
                    Cell(f"{name.capitalize()} threshold"),
                    Cell(money(estimate * fraction if estimate is not None else None)),
                    Cell(percent(fraction)),
                    Cell(f"{alert.crossed_on:%Y-%m-%d}" if alert else "not reached"),
                    Cell(money(alert.cumulative_cost) if alert else MISSING),
                )
            )
    rows.append(actual)
    if header.has_budget:
        rows.append(
            (
                Cell("Forecast at completion"),
                Cell(money(total.forecast_at_completion)),
                share(total.forecast_at_completion),
                Cell(MISSING),
                Cell(MISSING),
            )
        )
    return Table(
        columns=(
            "Line",
            f"Amount ({currency})",
            "Share of estimate",
            "First reached on (UTC)",
            f"Cumulative spend that day ({currency})",
        ),
        rows=tuple(rows),
        numeric_columns=frozenset({1, 2, 4}),
    )


def waterfall_table(overview: RunOverview) -> Table:
    """The waterfall's steps in numbers: each change and the running total, estimate to actual."""
    currency = currency_of(overview)
    total = overview.total
    rows = [(Cell("Estimate"), Cell(MISSING), Cell(money(total.estimated_cost)))]
    running = total.estimated_cost
    for label, delta in variance_steps(overview, with_rates=True):
        running += delta
        rows.append((Cell(label), Cell(money(delta, signed=True)), Cell(money(running))))
    rows.append((Cell("Actual"), Cell(money(total.variance, signed=True)), Cell(money(total.actual_cost))))
    return Table(
        columns=("Step", f"Change ({currency})", f"Running total ({currency})"),
        rows=tuple(rows),
        numeric_columns=frozenset({1, 2}),
        emphasized_rows=1,
    )


def _ordered_lines(overview: RunOverview) -> list[CostLine]:
    by_name = {line.cost_category: line for line in overview.categories}
    return [by_name[name] for name in ordered_categories(by_name)]


def estimate_vs_actual_table(overview: RunOverview) -> Table:
    """Estimate, actual, variance, status and forecast per category, then the total."""
    currency = currency_of(overview)
    rows = [
        (
            Cell("Total" if line is overview.total else line.cost_category),
            Cell(money(line.estimated_cost)),
            Cell(money(line.actual_cost)),
            Cell(money(line.variance, signed=True)),
            Cell(percent(line.variance_ratio, signed=True)),
            status_cell(line.status),
            Cell(money(line.forecast_at_completion)),
        )
        for line in [*_ordered_lines(overview), overview.total]
    ]
    return Table(
        columns=(
            "Category",
            f"Estimate ({currency})",
            f"Actual ({currency})",
            f"Variance ({currency})",
            "Variance %",
            "Status",
            f"Forecast at completion ({currency})",
        ),
        rows=tuple(rows),
        numeric_columns=frozenset({1, 2, 3, 4, 6}),
        emphasized_rows=1,
    )


def actual_table(overview: RunOverview) -> Table:
    """Actual cost and its share per category, then the total: the table of a run without a budget."""
    currency = currency_of(overview)
    total = overview.total.actual_cost
    rows = [
        (
            Cell("Total" if line is overview.total else line.cost_category),
            Cell(money(line.actual_cost)),
            Cell(percent(line.actual_cost / total if total else None)),
        )
        for line in [*_ordered_lines(overview), overview.total]
    ]
    return Table(
        columns=("Category", f"Actual ({currency})", "Share of actual"),
        rows=tuple(rows),
        numeric_columns=frozenset({1, 2}),
        emphasized_rows=1,
    )


def _difference(actual: Decimal | None, estimate: Decimal | None) -> Decimal | None:
    return None if actual is None or estimate is None else actual - estimate


def _compute_table(compute: CostLine, currency: str, *, has_budget: bool) -> Table:
    """GPU-hours, rate and cost of compute; with a budget, also how rate and usage moved the cost."""
    if not has_budget:
        return Table(
            columns=("Compute", "Actual"),
            rows=(
                (Cell("GPU-hours"), Cell(hours(compute.actual_gpu_hours))),
                (Cell(f"Rate ({currency} per GPU-hour)"), Cell(rate(compute.actual_rate))),
                (Cell(f"Compute cost ({currency})"), Cell(money(compute.actual_cost))),
            ),
            numeric_columns=frozenset({1}),
            emphasized_rows=1,
        )
    rows = (
        (
            Cell("GPU-hours (usage variance)"),
            Cell(hours(compute.estimated_gpu_hours)),
            Cell(hours(compute.actual_gpu_hours)),
            Cell(hours(_difference(compute.actual_gpu_hours, compute.estimated_gpu_hours), signed=True)),
            Cell(money(compute.usage_variance, signed=True)),
        ),
        (
            Cell(f"Rate, {currency} per GPU-hour (rate variance)"),
            Cell(rate(compute.estimated_rate)),
            Cell(rate(compute.actual_rate)),
            Cell(rate(_difference(compute.actual_rate, compute.estimated_rate), signed=True)),
            Cell(money(compute.rate_variance, signed=True)),
        ),
        (
            Cell("Effective MFU, over every GPU-hour (actual once the window ended)"),
            Cell(percent(compute.estimated_effective_mfu)),
            Cell(percent(compute.actual_effective_mfu)),
            Cell(
                percent(
                    _difference(compute.actual_effective_mfu, compute.estimated_effective_mfu),
                    signed=True,
                )
            ),
            Cell(MISSING),
        ),
        (
            Cell(f"Compute cost ({currency})"),
            Cell(money(compute.estimated_cost)),
            Cell(money(compute.actual_cost)),
            Cell(money(compute.variance, signed=True)),
            Cell(money(compute.variance, signed=True)),
        ),
    )
    return Table(
        columns=("Compute", "Estimate", "Actual", "Difference", f"Cost effect ({currency})"),
        rows=rows,
        numeric_columns=frozenset({1, 2, 3, 4}),
        emphasized_rows=1,
    )
