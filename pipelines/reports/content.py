"""What each report says: the run post-mortem and the summary, as `Document`s.

Formatting happens here, once, for both HTML and Markdown.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal

from pipelines.reports.charts import NO_RESOURCE_ID, ordered_categories, waterfall_steps
from pipelines.reports.data import (
    BudgetAlert,
    CostLine,
    DailySpend,
    PeriodShare,
    ReconciliationRow,
    RunDetails,
    RunOverview,
    TopResources,
    UnattributedInAccounts,
    WasteRank,
)
from pipelines.reports.document import (
    MISSING,
    Block,
    Cell,
    Chart,
    Document,
    Facts,
    Paragraph,
    Section,
    Table,
    hours,
    money,
    percent,
    rate,
    status_cell,
    text_cell,
)

NO_BUDGET = "No budget"
AMOUNTS_NOTE = (
    "Actual is effective cost (amortized: commitments at their effective rate, credits applied). "
    "Sums are exact; amounts are rounded to 2 decimals only for display."
)
WASTE_NOTE = (
    "Waste is an analysis of the run's attributed spend, not an addition to it: it does not change "
    "the amounts above, and a run's waste never exceeds its attributed effective cost."
)
VARIANCE_SPLIT_NOTE = (
    "Rate variance = (actual rate − estimated rate) × actual GPU-hours; usage variance = "
    "(actual GPU-hours − estimated GPU-hours) × estimated rate. Together they are the compute "
    "variance."
)


@dataclass(frozen=True)
class SummaryRun:
    """A run as the summary lists it.

    Attributes:
        overview: the run's header and numbers.
        report_link: path of the run's report relative to the summary, without suffix; None when
            the run has no report in the output folder.
    """

    overview: RunOverview
    report_link: str | None


def currency_of(overview: RunOverview) -> str:
    """The run's currency code, or a placeholder when the warehouse has none for it."""
    return overview.header.currency or "unknown currency"


def gpu_hours_of(overview: RunOverview) -> Decimal | None:
    """The run's actual GPU-hours: the exact sum over its categories."""
    values = [line.actual_gpu_hours for line in overview.categories if line.actual_gpu_hours is not None]
    return sum(values, Decimal(0)) if values else None


def billing_period_label(period: date) -> str:
    """Shows a billing period by its month, e.g. `2026-10`."""
    return period.strftime("%Y-%m")


def _periods_text(periods: Sequence[date]) -> str:
    return ", ".join(map(billing_period_label, periods))


def _as_of(overview: RunOverview) -> datetime | None:
    """How current the run's numbers are: the variance's as-of, else the run's last charge."""
    return overview.header.as_of or overview.header.last_charge


def _timestamp(value: datetime | None) -> str:
    return MISSING if value is None else f"{value:%Y-%m-%d %H:%M} UTC"


def _total_status(overview: RunOverview) -> Cell:
    if not overview.header.has_budget:
        return Cell(NO_BUDGET, tone="none")
    if overview.total.status is None:
        return Cell("Not computed", tone="none")
    return status_cell(overview.total.status)


def run_document(overview: RunOverview, details: RunDetails, charts: Mapping[str, Chart]) -> Document:
    """Builds a run's post-mortem report: each chart with its numbers in a table below it.

    Args:
        overview: the run's header and numbers table.
        details: its daily spend, top resources, threshold crossings, unattributed neighbours
            and reconciliation rows.
        charts: its rendered charts by name (`cumulative_spend`, `estimate_vs_actual`,
            `variance_waterfall`, `daily_spend`, `top_resources`, `waste_by_kind`); a missing one
            is left out.
    """
    header = overview.header
    has_budget = header.has_budget
    currency = currency_of(overview)
    compute = next((line for line in overview.categories if line.cost_category == "compute"), None)
    compute_blocks: list[Block] = []
    if compute is not None:
        compute_blocks.append(_compute_table(compute, currency, has_budget=has_budget))
        if compute.rate_variance is not None:
            compute_blocks.append(Paragraph(VARIANCE_SPLIT_NOTE))

    def with_chart(name: str, *blocks: Block) -> tuple[Block, ...]:
        return (charts[name], *blocks) if name in charts else blocks

    cumulative = with_chart("cumulative_spend", _levels_table(overview, details.alerts))
    by_category = with_chart(
        "estimate_vs_actual",
        _budget_table(overview) if has_budget else _actual_table(overview),
        *(() if has_budget else compute_blocks),
        Paragraph(AMOUNTS_NOTE),
    )
    sections = [
        Section("Overview", _overview_blocks(overview, details)),
        Section("Cumulative spend" + (" against budget" if has_budget else ""), cumulative),
        Section("Estimate vs actual by category" if has_budget else "Actual by category", by_category),
    ]
    if has_budget:
        sections.append(
            Section(
                "Variance: estimate to actual",
                with_chart("variance_waterfall", _waterfall_table(overview), *compute_blocks),
            )
        )
    sections += [
        Section(
            "Daily spend by category",
            with_chart("daily_spend", _daily_table(details.daily_spend, currency)),
        ),
        Section(
            "Top resources of the run",
            with_chart("top_resources", *_top_resource_blocks(details.top_resources, currency)),
        ),
        Section("Waste", with_chart("waste_by_kind", *_waste_blocks(details, currency))),
        Section(
            "Top unattributed resources in this run's accounts",
            _unattributed_blocks(details.unattributed),
        ),
    ]
    byline = " · ".join(
        f"{label} {value}"
        for label, value in (
            ("experiment", header.experiment),
            ("dataset", header.dataset_version),
            ("owner", header.owner),
        )
        if value
    )
    return Document(
        title=f"Cost post-mortem: {header.training_run}",
        subtitle=byline or "no experiment, dataset or owner recorded",
        badge=_total_status(overview),
        sections=tuple(sections),
    )


def _crossings_text(alerts: Sequence[BudgetAlert]) -> str:
    if not alerts:
        return "none"
    return ", ".join(f"{alert.threshold} on {alert.crossed_on:%Y-%m-%d}" for alert in alerts)


def _levels_table(overview: RunOverview, alerts: Sequence[BudgetAlert]) -> Table:
    """The chart's lines in numbers: the spend so far and, with a budget, the estimate, the
    thresholds with the day each was first reached, and the forecast."""
    header, total = overview.header, overview.total
    currency = currency_of(overview)
    estimate = total.estimated_cost if header.has_budget else None

    def share(amount: Decimal | None) -> Cell:
        return Cell(percent(amount / estimate if estimate and amount is not None else None))

    actual = (
        Cell(f"Actual so far (as of {_timestamp(_as_of(overview))})"),
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
                Cell("Forecast at completion (linear burn)"),
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


def _waterfall_table(overview: RunOverview) -> Table:
    currency = currency_of(overview)
    total = overview.total
    rows = [(Cell("Estimate"), Cell(MISSING), Cell(money(total.estimated_cost)))]
    running = total.estimated_cost
    for label, delta in waterfall_steps(overview.categories):
        running += delta
        rows.append((Cell(label), Cell(money(delta, signed=True)), Cell(money(running))))
    rows.append((Cell("Actual"), Cell(money(total.variance, signed=True)), Cell(money(total.actual_cost))))
    return Table(
        columns=("Step", f"Change ({currency})", f"Running total ({currency})"),
        rows=tuple(rows),
        numeric_columns=frozenset({1, 2}),
        emphasized_rows=1,
    )


def _daily_table(daily: Sequence[DailySpend], currency: str) -> Table:
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


def _top_resource_blocks(resources: TopResources, currency: str) -> tuple[Block, ...]:
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


def _waste_blocks(details: RunDetails, currency: str) -> tuple[Block, ...]:
    waste = details.waste
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
                Cell(kind.kind.replace("_", " ")),
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
    return kinds, intro, top, methods, Paragraph(WASTE_NOTE)


def _overview_blocks(overview: RunOverview, details: RunDetails) -> tuple[Block, ...]:
    header, total = overview.header, overview.total
    currency = currency_of(overview)
    window = (
        f"{header.window_start:%Y-%m-%d} to {header.window_end:%Y-%m-%d}"
        if header.window_start and header.window_end
        else MISSING
    )
    facts = [
        ("Training run", text_cell(header.training_run)),
        ("Experiment", text_cell(header.experiment)),
        ("Dataset version", text_cell(header.dataset_version)),
        ("Owner", text_cell(header.owner)),
        ("Budget window", Cell(window)),
        ("As of", Cell(_timestamp(_as_of(overview)))),
        ("Currency", text_cell(header.currency)),
        ("Status of the total", _total_status(overview)),
        (f"Estimate ({currency})", Cell(money(total.estimated_cost))),
        (f"Actual ({currency})", Cell(money(total.actual_cost))),
        (f"Variance ({currency})", Cell(money(total.variance, signed=True))),
        (f"Forecast at completion ({currency})", Cell(money(total.forecast_at_completion))),
        ("GPU-hours", Cell(hours(gpu_hours_of(overview)))),
        ("Billing periods", Cell(_periods_text(header.billing_periods) or MISSING)),
    ]
    if header.has_budget:
        facts.append(("Thresholds first reached", Cell(_crossings_text(details.alerts))))
    blocks: list[Block] = [Facts(tuple(facts))]
    if not header.has_budget:
        blocks.append(
            Paragraph(
                "This run has no budget baseline: the report shows actual spend only, "
                "with no estimate, variance, thresholds or forecast.",
                tone="warning",
            )
        )
    blocks.append(reconciliation_paragraph(header.billing_periods, details.reconciliation))
    return tuple(blocks)


def reconciliation_paragraph(periods: Sequence[date], rows: Sequence[ReconciliationRow]) -> Paragraph:
    """States whether every `*_diff` is 0 for the billing periods a run touched."""
    if not periods:
        return Paragraph("Reconciliation: nothing to reconcile, the run has no attributed spend yet.")
    period_text = _periods_text(periods)
    if not rows:
        return Paragraph(f"Reconciliation: no reconciliation data for {period_text}.", tone="warning")
    differences = [
        f"{row.source_name} {billing_period_label(row.billing_period)} {name} = {value}"
        for row in rows
        for name, value in row.diffs.items()
        if value is not None and value != 0
    ]
    if differences:
        return Paragraph(
            f"Reconciliation: NOT reconciled for {period_text}: " + "; ".join(differences) + ".",
            tone="over",
        )
    unchecked = sorted(
        {f"{row.source_name} {billing_period_label(row.billing_period)}" for row in rows if None in row.diffs.values()}
    )
    if unchecked:
        return Paragraph(
            f"Reconciliation: incomplete for {period_text}: no raw control total for " + ", ".join(unchecked) + ".",
            tone="warning",
        )
    sources = sorted({row.source_name for row in rows})
    return Paragraph(
        f"Reconciliation: reconciled for {period_text}: every difference is 0 "
        f"(raw export = focus_line_items = cost_allocations; sources: {', '.join(sources)}).",
        tone="under",
    )


def _ordered_lines(overview: RunOverview) -> list[CostLine]:
    by_name = {line.cost_category: line for line in overview.categories}
    return [by_name[name] for name in ordered_categories(by_name)]


def _budget_table(overview: RunOverview) -> Table:
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


def _actual_table(overview: RunOverview) -> Table:
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


def _unattributed_blocks(unattributed: UnattributedInAccounts) -> tuple[Block, ...]:
    if not unattributed.top:
        return (Paragraph("No unattributed spend in the accounts this run used, in its billing periods."),)
    currencies = sorted({row.currency for row in unattributed.top if row.currency})
    intro = Paragraph(
        f"{unattributed.resource_rows} unattributed resource rows in the accounts this run used, in its "
        f"billing periods, total {money(unattributed.effective_cost)} {', '.join(currencies)}; the "
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
    return intro, table


def summary_document(
    runs: Sequence[SummaryRun],
    shares: Sequence[PeriodShare],
    alerts: Sequence[BudgetAlert],
    waste_ranking: Sequence[WasteRank] = (),
) -> Document:
    """Builds the summary of every run: one row each, totals, threshold crossings, runs and
    owners ranked by waste share, and the unattributed share per period.

    Args:
        runs: every run, with a link to its report where one exists.
        shares: each billing period's total and unattributed effective spend.
        alerts: every run's threshold crossings, earliest first.
        waste_ranking: runs, then owners, by the waste share of their attributed cost.
    """
    as_of = max((_as_of(run.overview) for run in runs if _as_of(run.overview) is not None), default=None)
    statuses = _status_counts(runs)
    subtitle = " · ".join(part for part in (f"{len(runs)} runs", statuses, f"as of {_timestamp(as_of)}") if part)
    return Document(
        title="Training run costs: summary",
        subtitle=subtitle,
        badge=None,
        sections=(
            Section(
                "Runs",
                (_runs_table(runs), Paragraph(AMOUNTS_NOTE))
                if runs
                else (Paragraph("No run has a budget or attributed cost in the warehouse yet."),),
            ),
            Section("Budget alerts", _alerts_blocks(runs, alerts)),
            Section("Waste by run and owner", _waste_ranking_blocks(runs, waste_ranking)),
            Section(
                "Unattributed spend per billing period",
                (_shares_table(shares),) if shares else (Paragraph("No cost allocations yet."),),
            ),
        ),
    )


def _alerts_blocks(runs: Sequence[SummaryRun], alerts: Sequence[BudgetAlert]) -> tuple[Block, ...]:
    if not alerts:
        return (Paragraph("No run has reached its warning or over threshold."),)
    links = {run.overview.header.training_run: run.report_link for run in runs}
    statuses = {run.overview.header.training_run: _total_status(run.overview) for run in runs}
    rows = [
        (
            Cell(alert.training_run, link=links.get(alert.training_run)),
            Cell(f"{alert.threshold} ({percent(alert.threshold_fraction)} of estimate)"),
            Cell(f"{alert.crossed_on:%Y-%m-%d}"),
            text_cell(alert.currency),
            Cell(money(alert.threshold_amount)),
            Cell(money(alert.cumulative_cost)),
            statuses.get(alert.training_run, Cell(MISSING)),
        )
        for alert in alerts
    ]
    table = Table(
        columns=(
            "Run",
            "Threshold",
            "First reached on (UTC)",
            "Currency",
            "Threshold amount",
            "Cumulative spend that day",
            "Status now",
        ),
        rows=tuple(rows),
        numeric_columns=frozenset({4, 5}),
    )
    note = Paragraph(
        "The first charge day at whose end a run's cumulative effective spend reached the "
        "threshold, recomputed from the data each night."
    )
    return table, note


def _waste_ranking_blocks(runs: Sequence[SummaryRun], ranking: Sequence[WasteRank]) -> tuple[Block, ...]:
    if not ranking:
        return (Paragraph("No run has attributed cost yet."),)
    links = {run.overview.header.training_run: run.report_link for run in runs}

    def table(level: str, first_column: str) -> Table:
        rows = [
            (
                Cell(str(rank)),
                Cell(entry.name, link=links.get(entry.name) if level == "run" else None),
                *((text_cell(entry.owner),) if level == "run" else (Cell(str(entry.runs)),)),
                text_cell(entry.currency),
                Cell(money(entry.attributed_cost)),
                Cell(money(entry.waste_cost)),
                Cell(percent(entry.waste_share)),
            )
            for rank, entry in enumerate((entry for entry in ranking if entry.level == level), start=1)
        ]
        return Table(
            columns=(
                "#",
                first_column,
                "Owner" if level == "run" else "Runs",
                "Currency",
                "Attributed cost",
                "Waste",
                "Waste share",
            ),
            rows=tuple(rows),
            numeric_columns=frozenset({0, 4, 5, 6} | ({2} if level == "owner" else set())),
        )

    return table("run", "Run"), table("owner", "Owner"), Paragraph(WASTE_NOTE)


def _status_counts(runs: Sequence[SummaryRun]) -> str:
    counts: dict[str, int] = {}
    for run in runs:
        label = _total_status(run.overview).text
        counts[label] = counts.get(label, 0) + 1
    return ", ".join(f"{count} {label.lower()}" for label, count in counts.items())


def _runs_table(runs: Sequence[SummaryRun]) -> Table:
    rows = [_summary_row(run) for run in runs]
    totals = _summary_totals([run.overview for run in runs])
    return Table(
        columns=(
            "Run",
            "Experiment",
            "Owner",
            "Currency",
            "Estimate",
            "Actual",
            "Variance",
            "Variance %",
            "Status",
            "Forecast at completion",
            "GPU-hours",
        ),
        rows=tuple(rows + totals),
        numeric_columns=frozenset({4, 5, 6, 7, 9, 10}),
        emphasized_rows=len(totals),
    )


def _summary_row(run: SummaryRun) -> tuple[Cell, ...]:
    overview = run.overview
    total = overview.total
    return (
        Cell(overview.header.training_run, link=run.report_link),
        text_cell(overview.header.experiment),
        text_cell(overview.header.owner),
        text_cell(overview.header.currency),
        Cell(money(total.estimated_cost)),
        Cell(money(total.actual_cost)),
        Cell(money(total.variance, signed=True)),
        Cell(percent(total.variance_ratio, signed=True)),
        _total_status(overview),
        Cell(money(total.forecast_at_completion)),
        Cell(hours(gpu_hours_of(overview))),
    )


def _summary_totals(overviews: Sequence[RunOverview]) -> list[tuple[Cell, ...]]:
    """Totals per currency: the budgeted runs with their variance, then, when some runs have no
    budget, every run's actual spend."""
    rows = []
    for currency in sorted({overview.header.currency or "" for overview in overviews}):
        same_currency = [overview for overview in overviews if (overview.header.currency or "") == currency]
        budgeted = [overview for overview in same_currency if overview.header.has_budget]
        if budgeted:
            rows.append(_budgeted_total_row(currency, budgeted))
        if len(budgeted) < len(same_currency):
            rows.append(_all_runs_total_row(currency, same_currency))
    return rows


def _budgeted_total_row(currency: str, budgeted: Sequence[RunOverview]) -> tuple[Cell, ...]:
    totals = [overview.total for overview in budgeted]
    estimate = _sum(line.estimated_cost for line in totals)
    variance = _sum(line.variance for line in totals)
    return (
        Cell(f"Budgeted runs ({len(budgeted)})"),
        Cell(""),
        Cell(""),
        text_cell(currency),
        Cell(money(estimate)),
        Cell(money(_sum(line.actual_cost for line in totals))),
        Cell(money(variance, signed=True)),
        Cell(percent(variance / estimate if estimate and variance is not None else None, signed=True)),
        Cell(""),
        Cell(money(_sum_all(line.forecast_at_completion for line in totals))),
        Cell(hours(_sum(gpu_hours_of(overview) for overview in budgeted))),
    )


def _all_runs_total_row(currency: str, overviews: Sequence[RunOverview]) -> tuple[Cell, ...]:
    return (
        Cell(f"All runs ({len(overviews)})"),
        Cell(""),
        Cell(""),
        text_cell(currency),
        Cell(MISSING),
        Cell(money(_sum(overview.total.actual_cost for overview in overviews))),
        Cell(MISSING),
        Cell(MISSING),
        Cell(""),
        Cell(MISSING),
        Cell(hours(_sum(gpu_hours_of(overview) for overview in overviews))),
    )


def _sum(values: Iterable[Decimal | None]) -> Decimal | None:
    """The exact sum of the known values; None when none is known."""
    present = [value for value in values if value is not None]
    return sum(present, Decimal(0)) if present else None


def _sum_all(values: Iterable[Decimal | None]) -> Decimal | None:
    """The exact sum, or None as soon as one value is unknown."""
    listed = list(values)
    return None if any(value is None for value in listed) else sum(listed, Decimal(0))


def _shares_table(shares: Sequence[PeriodShare]) -> Table:
    rows = [
        (
            Cell(billing_period_label(share.billing_period)),
            text_cell(share.currency),
            Cell(money(share.effective_cost)),
            Cell(money(share.unattributed_cost)),
            Cell(percent(share.unattributed_share)),
        )
        for share in shares
    ]
    return Table(
        columns=(
            "Billing period",
            "Currency",
            "Total effective cost",
            "Unattributed",
            "Unattributed share",
        ),
        rows=tuple(rows),
        numeric_columns=frozenset({2, 3, 4}),
    )
