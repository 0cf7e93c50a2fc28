"""What a run's spend bought: its training progress from its events and its unit economics (cost
per 1e9 tokens against the estimate, GPU-hours by pricing type), and what it cost all in (its
direct and fully loaded cost side by side)."""

from __future__ import annotations

from decimal import Decimal

from pipelines.reports.data import CostLine, FullyLoaded, RunDetails
from pipelines.reports.document import (
    MISSING,
    Block,
    Cell,
    Facts,
    Paragraph,
    Table,
    billing_period_label,
    hours,
    money,
    percent,
    rate,
    text_cell,
)
from pipelines.reports.run_facts import FULLY_LOADED_NOTE

# each pricing type as a sentence names it; a table cell starts it with a capital (PRICING_LABELS)
PRICING_NAMES = {
    "on_demand": "on-demand",
    "savings_plan": "Savings Plan",
    "reservation": "reserved instances",
    "committed_use": "committed use discount",
    "spot": "spot",
    "committed": "committed (other)",
    "other": "other",
}
PRICING_LABELS = {pricing: name[0].upper() + name[1:] for pricing, name in PRICING_NAMES.items()}


def economics_blocks(details: RunDetails, currency: str, compute: CostLine | None = None) -> tuple[Block, ...]:
    """The run's direct and fully loaded cost per billing period, its progress facts and its
    GPU-hours by pricing type, each with its cost per GPU-hour,
    and how that cost per GPU-hour differs from the compute rate (`compute`, the run's compute
    line) where the run has compute spend on lines without GPU-hours."""
    progress = details.progress
    blocks: list[Block] = list(fully_loaded_blocks(details.fully_loaded))
    if progress is None:
        blocks.append(Paragraph("No run events: no progress, step time or cost per token to show."))
    else:
        facts = [
            ("Steps", Cell(_of(progress.last_step, progress.planned_steps))),
            ("Tokens trained", Cell(_of(progress.tokens_trained, progress.planned_tokens))),
            ("Wall-clock hours", Cell(hours(progress.wall_clock_hours))),
            ("Productive hours", Cell(hours(progress.productive_hours))),
            ("Downtime hours (failure to resume)", Cell(hours(progress.downtime_hours))),
            ("Step time (seconds)", Cell(_decimal(progress.step_time_seconds, "0.01"))),
            ("Tokens per second per GPU", Cell(_decimal(progress.tokens_per_gpu_second, "0.1"))),
            ("Effective MFU of the tokens trained", Cell(percent(progress.effective_mfu))),
            ("Effective MFU if every planned token was trained", Cell(percent(progress.planned_tokens_effective_mfu))),
            (f"Cost per 1e9 tokens ({currency})", Cell(money(progress.cost_per_1e9_tokens))),
            (f"Estimated cost per 1e9 tokens ({currency})", Cell(money(progress.estimated_cost_per_1e9_tokens))),
        ]
        if progress.cost_per_1e9_tokens is not None and progress.estimated_cost_per_1e9_tokens:
            over = progress.cost_per_1e9_tokens / progress.estimated_cost_per_1e9_tokens - 1
            facts.append(("Cost per token against the estimate", Cell(percent(over, signed=True))))
        blocks.append(Facts(tuple(facts)))
    if details.pricing:
        blocks.append(
            Table(
                columns=(
                    "Pricing",
                    "GPU-hours",
                    "Share of GPU-hours",
                    f"Effective cost ({currency})",
                    f"Per GPU-hour ({currency})",
                ),
                rows=tuple(
                    (
                        Cell(PRICING_LABELS.get(row.pricing, row.pricing)),
                        Cell(hours(row.gpu_hours)),
                        Cell(percent(row.gpu_hours_share)),
                        Cell(money(row.effective_cost)),
                        Cell(rate(row.cost_per_gpu_hour)),
                    )
                    for row in details.pricing
                ),
                numeric_columns=frozenset(range(1, 5)),
            )
        )
        blocks.append(Paragraph(_per_gpu_hour_note(details, compute)))
    blocks.append(
        Paragraph(
            "Tokens trained: the events' own count, else the latest step x the budget's tokens per step. "
            "Downtime runs from each failure to the next resume; step time and throughput come from the "
            "step/time pairs while training. Cost per 1e9 tokens: the run's effective cost / tokens trained."
        )
    )
    return tuple(blocks)


def fully_loaded_blocks(rows: tuple[FullyLoaded, ...]) -> tuple[Block, ...]:
    """The run's direct and fully loaded cost side by side per billing period, with the shares
    between them; a total row when there are several periods of one currency."""
    if not rows:
        return ()
    table_rows = [
        _fully_loaded_cells(billing_period_label(row.billing_period), row.currency, _amounts(row)) for row in rows
    ]
    if len(rows) > 1 and len({row.currency for row in rows}) == 1:
        totals = [sum(column, Decimal(0)) for column in zip(*(_amounts(row) for row in rows), strict=True)]
        table_rows.append(_fully_loaded_cells("Total", rows[0].currency, totals))
    return (
        Table(
            columns=(
                "Billing period",
                "Currency",
                "Direct",
                "Idle capacity",
                "Unused commitments",
                "Tax",
                "Support",
                "Other unattributed",
                "Fully loaded",
            ),
            rows=tuple(table_rows),
            numeric_columns=frozenset(range(2, 9)),
            emphasized_rows=len(table_rows) - len(rows),
        ),
        Paragraph(FULLY_LOADED_NOTE),
    )


def _amounts(row: FullyLoaded) -> list[Decimal]:
    return [
        row.direct_cost,
        row.idle_capacity_share,
        row.unused_commitment_share,
        row.tax_share,
        row.support_share,
        row.other_unattributed_share,
        row.fully_loaded_cost,
    ]


def _fully_loaded_cells(label: str, currency: str | None, amounts: list[Decimal]) -> tuple[Cell, ...]:
    return (Cell(label), text_cell(currency), *(Cell(money(amount)) for amount in amounts))


def _per_gpu_hour_note(details: RunDetails, compute: CostLine | None) -> str:
    """What the pricing table's cost per GPU-hour divides, and why the compute rate differs."""
    note = "Per GPU-hour: the effective cost of the lines that carry GPU-hours ÷ their GPU-hours."
    if compute is None or compute.actual_rate is None:
        return note
    without_gpu_hours = compute.actual_cost - sum((row.effective_cost for row in details.pricing), Decimal(0))
    if without_gpu_hours == 0:
        return note
    return (
        f"{note} The compute rate ({rate(compute.actual_rate)} per GPU-hour) divides all compute spend, "
        f"{money(compute.actual_cost)}, by the same GPU-hours: it includes {money(without_gpu_hours)} of "
        "compute lines without GPU-hours (the vCPUs and memory of GPU machines where the provider bills "
        "them apart from the GPUs, CPU instances)"
        + (
            ""
            if compute.estimated_rate is None
            else f"; the estimated rate ({rate(compute.estimated_rate)}), the budget's price per GPU-hour, "
            "covers them too"
        )
        + "."
    )


def _of(value: int | None, planned: int | None) -> str:
    if value is None:
        return MISSING
    if not planned:
        return f"{value:,}"
    return f"{value:,} of {planned:,} planned ({percent(Decimal(value) / Decimal(planned))})"


def _decimal(value: Decimal | None, quantum: str) -> str:
    return MISSING if value is None else f"{value.quantize(Decimal(quantum)):,}"
