"""Writes `budget_variance`, `group_budget_variance` and `budget_alerts`; the caller owns the transaction."""

from __future__ import annotations

import duckdb

from pipelines.plans.files import BudgetError, currency_mismatch
from pipelines.plans.schema import cost_behavior
from pipelines.plans.settings import AlertThresholds
from pipelines.sources.mappings import COST_CATEGORIES
from pipelines.warehouse.sql import read_sql


def elastic_categories() -> list[str]:
    """The cost categories whose spend is elastic where a baseline has no line of them."""
    return [category for category in COST_CATEGORIES if cost_behavior(category, fixed=()) == "elastic"]


def build_budget_variance(conn: duckdb.DuckDBPyConnection) -> int:
    """Rebuilds `budget_variance` from `budget_baselines` and `cost_allocations`.

    Args:
        conn: a writable warehouse connection, inside the caller's transaction.

    Returns:
        The number of rows written.

    Raises:
        BudgetError: a budgeted run has allocations billed in another currency than its budget.
    """
    _require_budget_currencies(conn)
    (written,) = conn.execute(
        read_sql("marts/budget_variance", "insert"), {"elastic_categories": elastic_categories()}
    ).fetchone()
    return written


def build_group_budget_variance(conn: duckdb.DuckDBPyConnection) -> int:
    """Rebuilds `group_budget_variance` from `group_budgets` and `cost_allocations`.

    Args:
        conn: a writable warehouse connection, inside the caller's transaction.

    Returns:
        The number of rows written.

    Raises:
        BudgetError: a group budget's scope has allocations billed in another currency than the budget.
    """
    mismatches = conn.execute(read_sql("marts/group_budget_variance", "currency_mismatches")).fetchall()
    if mismatches:
        raise BudgetError(
            "\n".join(
                currency_mismatch(budget_file, budget_currency, f"{scope_kind} {scope}", billing_currencies)
                for budget_file, budget_currency, scope_kind, scope, billing_currencies in mismatches
            )
        )
    (written,) = conn.execute(read_sql("marts/group_budget_variance", "insert")).fetchone()
    return written


def run_currencies(conn: duckdb.DuckDBPyConnection) -> dict[str, list[str]]:
    """Every training run with spend attributed in `cost_allocations`, with the currencies it is billed in."""
    rows = conn.execute(read_sql("attribution/cost_allocations", "run_currencies")).fetchall()
    return dict(rows)


def known_scope_values(conn: duckdb.DuckDBPyConnection) -> dict[str, set[str]]:
    """Per dimension a group budget may scope (experiment, owner, dataset_version, cluster and each
    custom dimension), every value `cost_allocations` carries."""
    known: dict[str, set[str]] = {}
    for scope_kind, scope in conn.execute(read_sql("marts/group_budget_variance", "known_values")).fetchall():
        known.setdefault(scope_kind, set()).add(scope)
    return known


ALERTS_SQL = "marts/budget_alerts"
# The parts of budget_alerts the kinds share (temp tables and a macro of the build's connection),
# and what follows the kinds: the crossings of the daily kinds, then every run's crossings inserted
ALERT_PARTS = ("plans", "spend", "levels", "detail", "anomalies", "daily", "crossings")
ALERT_CROSSINGS = ("cumulative_crossings", "run_crossings")
# Each alert kind: its file ALERTS_SQL/<kind>.sql and the settings it binds (alert_parameters);
# `utilization` holds both kinds judged on run_utilization, low_gpu_utilization and data_loading_share;
# `spend_anomaly` the daily_spend_anomaly series beyond runs (cost categories, unattributed spend)
ALERT_KINDS = {
    "cost": (),
    "gpu_hours": (),
    "wall_clock": (),
    "storage": (),
    "daily_spend_anomaly": ("anomaly_trailing_days", "anomaly_minimum_days"),
    "idle_gpus": ("idle_warning_hours", "idle_over_hours"),
    "utilization": (),
    "spend_anomaly": ("anomaly_trailing_days", "anomaly_minimum_days", "anomaly_warning", "anomaly_over"),
    "group_budget": (),
}


def alert_parameters(settings: AlertThresholds) -> dict[str, object]:
    """The thresholds settings the budget_alerts statements take (besides each run's levels)."""
    return {
        "anomaly_trailing_days": settings.daily_spend_anomaly.trailing_days,
        "anomaly_minimum_days": settings.daily_spend_anomaly.minimum_days,
        "anomaly_warning": settings.daily_spend_anomaly.warning,
        "anomaly_over": settings.daily_spend_anomaly.over,
        "idle_warning_hours": settings.idle_gpus.warning_hours,
        "idle_over_hours": settings.idle_gpus.over_hours,
    }


def build_budget_alerts(conn: duckdb.DuckDBPyConnection, settings: AlertThresholds | None = None) -> int:
    """Rebuilds `budget_alerts`: the first day each run's cumulative spend, GPU-hours, wall-clock
    and storage spend reached a threshold, the days far above a run's trailing median or, beyond
    runs, a cost category's or an account and service's unattributed spend, and idle GPU instances.

    Recomputed whole from `budget_baselines`, `cost_allocations` and `run_events`, so rebuilding
    from the same data gives the same rows: the table emptied, the parts the kinds share, then one
    statement per kind (ALERT_KINDS), all in the caller's transaction.

    Args:
        conn: a writable warehouse connection, inside the caller's transaction.
        settings: runledger.yaml's `thresholds:` (the anomaly's trailing days and the levels of the
            series beyond runs, the idle hours);
            None: its defaults.

    Returns:
        The number of rows written.
    """
    parameters = alert_parameters(settings or AlertThresholds())
    for shared in ("delete", *ALERT_PARTS):
        conn.execute(read_sql(ALERTS_SQL, shared))
    for kind, names in ALERT_KINDS.items():
        conn.execute(read_sql(f"{ALERTS_SQL}/{kind}"), {name: parameters[name] for name in names})
    for finish in ALERT_CROSSINGS:
        conn.execute(read_sql(ALERTS_SQL, finish))
    (written,) = conn.execute(read_sql(ALERTS_SQL, "count")).fetchone()
    return written


def _require_budget_currencies(conn: duckdb.DuckDBPyConnection) -> None:
    mismatches = conn.execute(read_sql("marts/budget_variance", "currency_mismatches")).fetchall()
    if mismatches:
        raise BudgetError(
            "\n".join(
                currency_mismatch(budget_file, budget_currency, training_run, billing_currencies)
                for training_run, budget_file, budget_currency, billing_currencies in mismatches
            )
        )
