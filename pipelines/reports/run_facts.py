"""What both reports say of a run: its currency, GPU-hours, how current its numbers are, the
status of its total, and the notes on amounts and waste."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal

from pipelines.reports.data import RunOverview
from pipelines.reports.document import Cell, status_cell

NO_BUDGET = "No budget"
AMOUNTS_NOTE = (
    "Actual is effective cost (amortized: commitments at their effective rate, credits applied). "
    "Sums are exact; amounts are rounded to 2 decimals only for display."
)
FULLY_LOADED_NOTE = (
    "Direct: the run's own effective cost (shared-cost rules and commitment chargeback included). Fully loaded: "
    "direct plus the run's share of what no run owns, kind by kind: idle capacity of the shared clusters it ran "
    "on (among their runs), then unused commitments, tax, support and every other unattributed part, credits "
    "included (among the runs of the same provider, else of the whole period), each in proportion to direct "
    "cost. Over all runs the fully loaded costs sum exactly to the period's total; nothing is moved in the "
    "allocations."
)
WASTE_NOTE = (
    "Waste is an analysis of the run's attributed spend, not an addition to it: it does not change "
    "the amounts above, and a run's waste never exceeds its attributed effective cost."
)


def currency_of(overview: RunOverview) -> str:
    """The run's currency code, or a placeholder when the warehouse has none for it."""
    return overview.header.currency or "unknown currency"


def gpu_hours_of(overview: RunOverview) -> Decimal | None:
    """The run's actual GPU-hours: the exact sum over its categories."""
    values = [line.actual_gpu_hours for line in overview.categories if line.actual_gpu_hours is not None]
    return sum(values, Decimal(0)) if values else None


def as_of(overview: RunOverview) -> datetime | None:
    """How current the run's numbers are: the variance's as-of, else the run's last charge."""
    return overview.header.as_of or overview.header.last_charge


def total_status(overview: RunOverview) -> Cell:
    """The status of the run's total as a toned cell; a run without a budget says so."""
    if not overview.header.has_budget:
        return Cell(NO_BUDGET, tone="none")
    if overview.total.status is None:
        return Cell("Not computed", tone="none")
    return status_cell(overview.total.status)
