"""The summary of every run as a `Document`: one row per run with totals per currency, every
budget alert, each group budget's periods, runs and owners ranked by waste share, a section per
shared cluster, and the unattributed share per billing period."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal

from pipelines.reports.alerts import alerts_blocks
from pipelines.reports.clusters import ClusterReport, cluster_sections
from pipelines.reports.data import BudgetAlert, GroupBudgetPeriod, PeriodShare, RunOverview, WasteRank
from pipelines.reports.document import (
    MISSING,
    Block,
    Cell,
    Chart,
    Document,
    Paragraph,
    Section,
    Table,
    billing_period_label,
    hours,
    money,
    percent,
    status_cell,
    text_cell,
    timestamp,
)
from pipelines.reports.recommendations import Recommendation, top_recommendation_blocks
from pipelines.reports.run_causes import why_paragraph
from pipelines.reports.run_facts import AMOUNTS_NOTE, FULLY_LOADED_NOTE, WASTE_NOTE, as_of, gpu_hours_of, total_status


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


def summary_document(
    runs: Sequence[SummaryRun],
    shares: Sequence[PeriodShare],
    alerts: Sequence[BudgetAlert],
    waste_ranking: Sequence[WasteRank] = (),
    clusters: Sequence[ClusterReport] = (),
    cluster_charts: Mapping[str, Chart] | None = None,
    recommendations: Sequence[Recommendation] = (),
    group_budgets: Sequence[GroupBudgetPeriod] = (),
) -> Document:
    """Builds the summary of every run: one row each, totals, every budget alert, runs and
    owners ranked by waste share, each shared cluster's utilization and runs, and the
    unattributed share per period.

    Args:
        runs: every run, with a link to its report where one exists.
        shares: each billing period's total and unattributed effective spend.
        alerts: every budget alert, runs' and idle GPU instances', earliest first.
        waste_ranking: runs, then owners, by the waste share of their attributed cost.
        clusters: every shared cluster, a section each (none without clusters).
        cluster_charts: their rendered utilization charts by `ClusterReport.chart_name`.
        recommendations: the ten largest recommendations across runs.
        group_budgets: each group budget's periods (the section is left out without any).
    """
    links = {run.overview.header.training_run: run.report_link for run in runs}
    latest = max((as_of(run.overview) for run in runs if as_of(run.overview) is not None), default=None)
    statuses = _status_counts(runs)
    subtitle = " · ".join(part for part in (f"{len(runs)} runs", statuses, f"as of {timestamp(latest)}") if part)
    return Document(
        title="Training run costs: summary",
        subtitle=subtitle,
        badge=None,
        sections=(
            Section(
                "Runs",
                (_runs_table(runs), Paragraph(AMOUNTS_NOTE), Paragraph(FULLY_LOADED_NOTE))
                if runs
                else (Paragraph("No run has a budget or attributed cost in the warehouse yet."),),
            ),
            Section("Why each run is over or under", _why_blocks(runs)),
            Section("Budget alerts", _alerts_blocks(runs, alerts)),
            *((Section("Group budgets", _group_budget_blocks(group_budgets)),) if group_budgets else ()),
            Section("Waste by run and owner", _waste_ranking_blocks(runs, waste_ranking)),
            Section("What to do next: the ten largest savings", top_recommendation_blocks(recommendations, links)),
            *cluster_sections(clusters, cluster_charts or {}, links),
            Section(
                "Unattributed spend per billing period",
                (_shares_table(shares),) if shares else (Paragraph("No cost allocations yet."),),
            ),
        ),
    )


def _why_blocks(runs: Sequence[SummaryRun]) -> tuple[Block, ...]:
    """Each budgeted run's "why" paragraph, as its report opens with it."""
    paragraphs = [
        Paragraph(f"{run.overview.header.training_run}: {why}", tone=run.overview.total.status)
        for run in runs
        if (why := why_paragraph(run.overview)) is not None
    ]
    return tuple(paragraphs) or (Paragraph("No run has a budget to explain a variance against."),)


def _alerts_blocks(runs: Sequence[SummaryRun], alerts: Sequence[BudgetAlert]) -> tuple[Block, ...]:
    return alerts_blocks(
        alerts,
        empty="No run has reached a threshold and no GPU instance has idled past its level.",
        links={run.overview.header.training_run: run.report_link for run in runs},
        statuses={run.overview.header.training_run: total_status(run.overview) for run in runs},
    )


GROUP_BUDGETS_NOTE = (
    "A group budget counts every allocation carrying its scope's value (by tag or from its run): budgets "
    "that overlap each count the same spend. Period: a billing period (YYYY-MM) of a monthly budget, or a "
    "window's start date. Forecast: the spend so far pro rata to the period's elapsed days."
)


def _group_budget_blocks(periods: Sequence[GroupBudgetPeriod]) -> tuple[Block, ...]:
    rows = [
        (
            Cell(period.scope_kind),
            Cell(period.scope),
            Cell(period.period),
            text_cell(period.currency),
            Cell(money(period.estimated_cost)),
            Cell(money(period.actual_cost)),
            Cell(money(period.variance)),
            Cell(percent(period.variance_pct)),
            status_cell(period.status),
            Cell(money(period.forecast_at_completion)),
        )
        for period in periods
    ]
    table = Table(
        columns=(
            "Dimension",
            "Scope",
            "Period",
            "Currency",
            "Budget",
            "Actual",
            "Variance",
            "Variance %",
            "Status",
            "Forecast",
        ),
        rows=tuple(rows),
        numeric_columns=frozenset({4, 5, 6, 7, 9}),
    )
    return table, Paragraph(GROUP_BUDGETS_NOTE)


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
        label = total_status(run.overview).text
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
            "Fully loaded",
            "Variance",
            "Variance %",
            "Status",
            "Forecast at completion",
            "GPU-hours",
        ),
        rows=tuple(rows + totals),
        numeric_columns=frozenset({4, 5, 6, 7, 8, 10, 11}),
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
        Cell(money(overview.header.fully_loaded_cost)),
        Cell(money(total.variance, signed=True)),
        Cell(percent(total.variance_ratio, signed=True)),
        total_status(overview),
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
        Cell(money(_sum_all(overview.header.fully_loaded_cost for overview in budgeted))),
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
        Cell(money(_sum_all(overview.header.fully_loaded_cost for overview in overviews))),
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
            Cell(money(share.untagged_cost)),
            Cell(percent(share.untagged_share)),
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
            "Untagged resources",
            "Untagged share",
        ),
        rows=tuple(rows),
        numeric_columns=frozenset({2, 3, 4, 5, 6}),
    )
