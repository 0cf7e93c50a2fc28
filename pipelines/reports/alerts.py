"""Budget alerts as both reports list them: every kind, a run's, an idle GPU instance's, a group
budget's or a series' of spend beyond runs, each with the level it reached, the value measured and
the first day."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from decimal import Decimal

from pipelines.reports.data import BudgetAlert
from pipelines.reports.document import MISSING, Block, Cell, Paragraph, Table, hours, money, percent, text_cell

COST_KIND = "cost"
KIND_LABELS = {
    COST_KIND: "cost",
    "gpu_hours": "GPU-hours",
    "wall_clock": "wall-clock hours",
    "storage": "storage spend",
    "daily_spend_anomaly": "daily spend anomaly",
    "idle_gpus": "idle GPU instance",
    "low_gpu_utilization": "low GPU utilization",
    "data_loading_share": "steps waiting for data",
    "group_budget": "group budget",
}
SHARE_UNIT = "share"  # the telemetry kinds' unit: a fraction, shown as a percentage
# what a level of each kind is a fraction of; a daily spend anomaly's level is a multiple of the
# trailing median, an idle GPU instance's a number of hours
PLANS = {
    COST_KIND: "the estimate",
    "gpu_hours": "the planned GPU-hours",
    "wall_clock": "the planned wall-clock hours",
    "storage": "the storage estimate",
    "group_budget": "the period's budget",
}
ALERTS_NOTE = (
    "First reached on: the first UTC day at whose end the measure reached the level, recomputed "
    "from the data each night. Spend then: a run's cumulative effective spend at the end of that day; "
    "for an idle GPU instance, the cost of its idle stretch so far; for a daily spend anomaly beyond runs (a cost "
    "category's spend, an account and service's unattributed spend), that day's spend of it; for a group budget, "
    "its scope's spend in the period."
)


def cost_alerts(alerts: Sequence[BudgetAlert]) -> list[BudgetAlert]:
    """The alerts of kind cost: the run's cumulative spend against its estimate."""
    return [alert for alert in alerts if alert.kind == COST_KIND]


def alerts_blocks(
    alerts: Sequence[BudgetAlert],
    *,
    empty: str,
    links: Mapping[str, str | None] | None = None,
    statuses: Mapping[str, Cell] | None = None,
) -> tuple[Block, ...]:
    """A table of the alerts, one row each, and how to read it.

    Args:
        alerts: the alerts to list, in their order.
        empty: the sentence shown instead when there is none.
        links: report links by run, for the run column; None links nothing.
        statuses: each run's status now; with it, a last column shows it.
    """
    if not alerts:
        return (Paragraph(empty),)
    rows = [
        (
            Cell(KIND_LABELS.get(alert.kind, alert.kind)),
            _subject(alert, links or {}),
            Cell(alert.threshold),
            Cell(f"{alert.crossed_on:%Y-%m-%d}"),
            Cell(_amount(alert.observed, alert)),
            Cell(_level(alert)),
            Cell(_with_unit(money(alert.cumulative_cost), alert.currency)),
            *((statuses.get(alert.training_run or "", Cell(MISSING)),) if statuses is not None else ()),
        )
        for alert in alerts
    ]
    table = Table(
        columns=(
            "Kind",
            "Run, GPU instance, group or spend",
            "Threshold",
            "First reached on (UTC)",
            "Observed that day",
            "Level",
            "Spend then",
            *(("Status now",) if statuses is not None else ()),
        ),
        rows=tuple(rows),
        numeric_columns=frozenset({4, 6}),
    )
    return table, Paragraph(ALERTS_NOTE)


def _subject(alert: BudgetAlert, links: Mapping[str, str | None]) -> Cell:
    if alert.scope_kind is not None:
        return Cell(f"{alert.scope_kind} {alert.scope} ({alert.period})")
    if alert.training_run is None:
        return text_cell(alert.resource_id or alert.series)
    return Cell(alert.training_run, link=links.get(alert.training_run))


def _with_unit(text: str, unit: str | None) -> str:
    return f"{text} {unit}" if unit else text


def _amount(value: Decimal, alert: BudgetAlert) -> str:
    """An amount in the alert's unit: money to the cent when the unit is its currency, a share as a
    percentage, else hours."""
    if alert.unit == SHARE_UNIT:
        return percent(value)
    shown = money(value) if alert.unit == alert.currency else hours(value)
    return _with_unit(shown, alert.unit)


def _level(alert: BudgetAlert) -> str:
    amount = _amount(alert.threshold_amount, alert)
    if alert.kind in PLANS:
        return f"{amount} ({percent(alert.threshold_fraction)} of {PLANS[alert.kind]})"
    if alert.kind == "daily_spend_anomaly":
        return f"{amount} ({alert.threshold_fraction.normalize():f} × the trailing median)"
    return amount
