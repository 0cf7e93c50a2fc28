"""A run's post-mortem report as a `Document`: its overview, then each chart with its numbers
in a table below it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import date

from pipelines.reports.alerts import alerts_blocks, cost_alerts
from pipelines.reports.clusters import run_cluster_blocks
from pipelines.reports.data import BudgetAlert, ProvisionalSpend, ReconciliationRow, RunDetails, RunHeader, RunOverview
from pipelines.reports.document import (
    MISSING,
    Block,
    Cell,
    Chart,
    Document,
    Facts,
    Paragraph,
    Section,
    billing_period_label,
    hours,
    money,
    text_cell,
    timestamp,
)
from pipelines.reports.recommendations import SECTION_TITLE as NEXT_STEPS_TITLE
from pipelines.reports.recommendations import run_recommendation_blocks
from pipelines.reports.run_budget import (
    actual_table,
    compute_blocks,
    estimate_vs_actual_table,
    levels_table,
    waterfall_table,
)
from pipelines.reports.run_causes import CAUSES_NOTE, estimated_rate_causes, why_paragraph
from pipelines.reports.run_commitments import commitment_blocks
from pipelines.reports.run_economics import economics_blocks
from pipelines.reports.run_facts import AMOUNTS_NOTE, as_of, currency_of, gpu_hours_of, total_status
from pipelines.reports.run_spend import daily_table, top_resource_blocks, unattributed_blocks, waste_blocks
from pipelines.reports.utilization import UTILIZATION_CHART, utilization_blocks

SUMMARY_STEM = "summary"
# a run's report is in its own folder beside the summary
UP_TO_SUMMARY = Cell("← Summary of every run", link=f"../{SUMMARY_STEM}")


def run_document(overview: RunOverview, details: RunDetails, charts: Mapping[str, Chart]) -> Document:
    """Builds a run's post-mortem report: each chart with its numbers in a table below it.

    Args:
        overview: the run's header and numbers table.
        details: its daily spend, top resources, budget alerts (its own and its idle GPU
            instances'), unattributed neighbours and reconciliation rows.
        charts: its rendered charts by name (`cumulative_spend`, `estimate_vs_actual`,
            `variance_waterfall`, `daily_spend`, `top_resources`, `waste_by_kind`, `gpu_utilization`); a missing one
            is left out.
    """
    header = overview.header
    has_budget = header.has_budget
    currency = currency_of(overview)
    compute = compute_blocks(overview)

    def with_chart(name: str, *blocks: Block) -> tuple[Block, ...]:
        return (charts[name], *blocks) if name in charts else blocks

    cumulative = with_chart("cumulative_spend", levels_table(overview, cost_alerts(details.alerts)))
    by_category = with_chart(
        "estimate_vs_actual",
        estimate_vs_actual_table(overview) if has_budget else actual_table(overview),
        *(() if has_budget else compute),
        Paragraph(AMOUNTS_NOTE),
    )
    sections = [
        Section("Overview", _overview_blocks(overview, details)),
        Section("Cumulative spend" + (" against budget" if has_budget else ""), cumulative),
        Section(
            "Budget alerts",
            alerts_blocks(
                details.alerts,
                empty="The run has reached no threshold, and no GPU instance it was charged for idled past its level.",
            ),
        ),
        Section("Estimate vs actual by category" if has_budget else "Actual by category", by_category),
    ]
    if has_budget:
        sections.append(
            Section(
                "Variance: estimate to actual",
                with_chart(
                    "variance_waterfall",
                    waterfall_table(overview),
                    *((Paragraph(CAUSES_NOTE),) if overview.causes else ()),
                    *compute,
                ),
            )
        )
    commitments = commitment_blocks(overview, details)
    if commitments:
        sections.append(Section("Unused commitment charged to the run", commitments))
    compute_line = next((line for line in overview.categories if line.cost_category == "compute"), None)
    sections.append(Section("Progress and unit economics", economics_blocks(details, currency, compute_line)))
    clusters = run_cluster_blocks(details.clusters)
    if clusters:
        sections.append(Section("Shared clusters the run ran on", clusters))
    utilization = utilization_blocks(details.utilization, charts.get(UTILIZATION_CHART))
    if utilization:
        sections.append(Section("GPU utilization and data wait", utilization))
    sections += [
        Section(
            "Daily spend by category",
            with_chart("daily_spend", daily_table(details.daily_spend, currency)),
        ),
        Section(
            "Top resources of the run",
            with_chart("top_resources", *top_resource_blocks(details.top_resources, currency)),
        ),
        Section(
            "Waste",
            with_chart("waste_by_kind", *waste_blocks(details, currency, estimated_rate_causes(overview))),
        ),
        Section(
            "Top unattributed resources in this run's accounts",
            unattributed_blocks(details.unattributed, details.outside_window),
        ),
    ]
    sections.append(Section(NEXT_STEPS_TITLE, run_recommendation_blocks(details.recommendations)))
    byline = " · ".join(
        f"{label} {value}"
        for label, value in (
            ("experiment", header.experiment),
            ("dataset", header.dataset_version),
            ("owner", header.owner),
            *sorted(header.custom_dimensions.items()),
        )
        if value
    )
    return Document(
        title=f"Cost post-mortem: {header.training_run}",
        subtitle=byline or "no experiment, dataset or owner recorded",
        badge=total_status(overview),
        sections=tuple(sections),
        up=UP_TO_SUMMARY,
    )


def _crossings_text(alerts: Sequence[BudgetAlert]) -> str:
    if not alerts:
        return "none"
    return ", ".join(f"{alert.threshold} on {alert.crossed_on:%Y-%m-%d}" for alert in alerts)


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
        *((dimension, text_cell(value)) for dimension, value in sorted(header.custom_dimensions.items())),
        ("Budget window", Cell(window)),
        ("As of", Cell(timestamp(as_of(overview)))),
        *_sources_as_of(header),
        ("Currency", text_cell(header.currency)),
        ("Status of the total", total_status(overview)),
        (f"Estimate ({currency})", Cell(money(total.estimated_cost))),
        (f"Actual ({currency})", Cell(money(total.actual_cost))),
        (f"Variance ({currency})", Cell(money(total.variance, signed=True))),
        (f"Forecast at completion ({currency})", Cell(money(total.forecast_at_completion))),
        ("GPU-hours", Cell(hours(gpu_hours_of(overview)))),
        ("Billing periods", Cell(_periods_text(header.billing_periods) or MISSING)),
    ]
    if header.has_budget:
        facts.append(("Thresholds first reached", Cell(_crossings_text(cost_alerts(details.alerts)))))
    why = why_paragraph(overview)
    blocks: list[Block] = [] if why is None else [Paragraph(why, tone=total.status)]
    blocks.append(Facts(tuple(facts)))
    if not header.has_budget:
        blocks.append(
            Paragraph(
                "This run has no budget baseline: the report shows actual spend only, "
                "with no estimate, variance, thresholds or forecast.",
                tone="warning",
            )
        )
    blocks.extend(provisional_paragraphs(details.provisional))
    blocks.append(reconciliation_paragraph(header.billing_periods, details.reconciliation))
    return tuple(blocks)


def provisional_paragraphs(rows: Sequence[ProvisionalSpend]) -> tuple[Paragraph, ...]:
    """The run's spend since its newest billed hour, marked provisional (it is in no other figure of
    the report), and how far off the latest estimate the bill has covered was."""
    paragraphs = []
    for row in rows:
        if row.status == "provisional":
            paragraphs.append(
                Paragraph(
                    f"Provisional, not billed yet: about {money(row.estimated_cost)} {row.currency or ''} for "
                    f"{hours(row.gpu_hours)} GPU-hours trained from the newest billed hour "
                    f"({timestamp(row.billed_through)}) to the latest event ({timestamp(row.estimated_through)}), "
                    f"estimated from the run's events at its observed {money(row.rate)} per GPU-hour. It is not in "
                    "the actual, the variance or the charts, and the bill replaces it when it arrives.",
                    tone="warning",
                )
            )
    settled = next((row for row in rows if row.status == "billed"), None)
    if settled is not None:
        paragraphs.append(
            Paragraph(
                f"The latest estimate the bill has replaced ({timestamp(settled.billed_through)} to "
                f"{timestamp(settled.estimated_through)}): estimated {money(settled.estimated_cost)}, billed "
                f"{money(settled.billed_cost)}, off by {money(settled.error, signed=True)}"
                + ("" if settled.error_pct is None else f" ({money(settled.error_pct, signed=True)} %)")
                + "."
            )
        )
    return tuple(paragraphs)


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


def _periods_text(periods: Sequence[date]) -> str:
    return ", ".join(map(billing_period_label, periods))


def _sources_as_of(header: RunHeader) -> list[tuple[str, Cell]]:
    """Each billing source's as_of, when the sources are not all as far."""
    sources = header.sources_as_of or {}
    if len(set(sources.values())) < 2:
        return []
    return [
        (
            "As of, per source",
            Cell(", ".join(f"{name} {timestamp(moment)}" for name, moment in sorted(sources.items()))),
        )
    ]
