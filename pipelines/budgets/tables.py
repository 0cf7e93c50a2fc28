"""Writes `budget_baselines`, `budget_variance` and `budget_alerts`; the caller owns the
transaction."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import duckdb

from pipelines.budgets.estimate import baseline_rows
from pipelines.budgets.files import BudgetError
from pipelines.budgets.schema import Budget, cost_behavior
from pipelines.budgets.settings import AlertThresholds
from pipelines.sources.mappings import COST_CATEGORIES
from pipelines.warehouse.sql import read_sql
from pipelines.warehouse.step_inputs import build_if_changed, rows_inputs, tables_inputs

MACROS = "schema/macros"
# The tables each build reads: while their files are the same, the build stands (step_inputs).
BUDGET_VARIANCE_INPUTS = ("budget_baselines", "cost_allocations", "focus_line_items", "run_events", "run_progress")
BUDGET_ALERTS_INPUTS = ("budget_baselines", "cost_allocations", "focus_line_items", "run_events")


def replace_budget_baselines(
    conn: duckdb.DuckDBPyConnection,
    budgets_with_files: Iterable[tuple[Budget, Path | str]],
    defaults: AlertThresholds | None = None,
) -> int:
    """Replaces every row of `budget_baselines` with the estimates of the given budgets.

    Args:
        conn: a writable warehouse connection, inside the caller's transaction.
        budgets_with_files: each budget with the file it was read from, as returned by
            `load_budgets_with_files`.
        defaults: runledger.yaml's `thresholds:`, the defaults of each budget's alert levels.

    Returns:
        The number of rows written.
    """
    rows = _baseline_rows(budgets_with_files, defaults)
    _write_baselines(conn, rows)
    return len(rows)


def replace_budget_baselines_if_changed(
    conn: duckdb.DuckDBPyConnection,
    budgets_with_files: Iterable[tuple[Budget, Path | str]],
    defaults: AlertThresholds | None = None,
) -> bool:
    """`replace_budget_baselines` unless the table already holds the same rows (step_inputs), so a
    night with the same budget files writes nothing.

    Returns:
        True when the table was replaced.
    """
    rows = _baseline_rows(budgets_with_files, defaults)
    inputs = rows_inputs("budget_baselines", rows, ("inputs/budget_baselines",))
    return build_if_changed(conn, inputs, lambda: _write_baselines(conn, rows))


def _baseline_rows(
    budgets_with_files: Iterable[tuple[Budget, Path | str]], defaults: AlertThresholds | None
) -> list[dict]:
    return [row for budget, path in budgets_with_files for row in baseline_rows(budget, path, defaults)]


def _write_baselines(conn: duckdb.DuckDBPyConnection, rows: list[dict]) -> None:
    conn.execute(read_sql("inputs/budget_baselines", "delete"))
    if rows:
        conn.executemany(read_sql("inputs/budget_baselines", "insert"), rows)


def _elastic_categories() -> list[str]:
    return [category for category in COST_CATEGORIES if cost_behavior(category, fixed=()) == "elastic"]


def build_budget_variance_if_changed(conn: duckdb.DuckDBPyConnection) -> bool:
    """Rebuilds `budget_variance` unless it was built from the same tables (BUDGET_VARIANCE_INPUTS,
    their files), SQL and categories, and records them.

    Args:
        conn: a writable warehouse connection on the lake, inside the caller's transaction.

    Returns:
        True when `budget_variance` was rebuilt.

    Raises:
        BudgetError: see `build_budget_variance` (a table built stands only once it passed).
    """
    inputs = tables_inputs(
        conn,
        "budget_variance",
        BUDGET_VARIANCE_INPUTS,
        ("marts/budget_variance", MACROS),
        {"elastic_categories": _elastic_categories()},
    )
    return build_if_changed(conn, inputs, lambda: build_budget_variance(conn))


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
        read_sql("marts/budget_variance", "insert"), {"elastic_categories": _elastic_categories()}
    ).fetchone()
    return written


def attributed_runs(conn: duckdb.DuckDBPyConnection) -> set[str]:
    """Every training run with spend attributed in `cost_allocations`."""
    return {
        training_run
        for (training_run,) in conn.execute(read_sql("attribution/cost_allocations", "attributed_runs")).fetchall()
    }


def build_budget_alerts_if_changed(conn: duckdb.DuckDBPyConnection, settings: AlertThresholds) -> bool:
    """Rebuilds `budget_alerts` unless it was built from the same tables (BUDGET_ALERTS_INPUTS,
    their files), SQL and thresholds, and records them.

    Args:
        conn: a writable warehouse connection on the lake, inside the caller's transaction.
        settings: runledger.yaml's `thresholds:`.

    Returns:
        True when `budget_alerts` was rebuilt.
    """
    inputs = tables_inputs(
        conn, "budget_alerts", BUDGET_ALERTS_INPUTS, ("marts/budget_alerts", MACROS), _alert_parameters(settings)
    )
    return build_if_changed(conn, inputs, lambda: build_budget_alerts(conn, settings))


def _alert_parameters(settings: AlertThresholds) -> dict[str, object]:
    return {
        "anomaly_trailing_days": settings.daily_spend_anomaly.trailing_days,
        "anomaly_minimum_days": settings.daily_spend_anomaly.minimum_days,
        "idle_warning_hours": settings.idle_gpus.warning_hours,
        "idle_over_hours": settings.idle_gpus.over_hours,
    }


def build_budget_alerts(conn: duckdb.DuckDBPyConnection, settings: AlertThresholds | None = None) -> int:
    """Rebuilds `budget_alerts`: the first day each run's cumulative spend, GPU-hours, wall-clock
    and storage spend reached a threshold, the days far above a run's trailing median, and idle
    GPU instances.

    Recomputed whole from `budget_baselines`, `cost_allocations` and `run_events`, so rebuilding
    from the same data gives the same rows.

    Args:
        conn: a writable warehouse connection, inside the caller's transaction.
        settings: runledger.yaml's `thresholds:` (the anomaly's trailing days and the idle hours);
            None: its defaults.

    Returns:
        The number of rows written.
    """
    (written,) = conn.execute(
        read_sql("marts/budget_alerts", "insert"), _alert_parameters(settings or AlertThresholds())
    ).fetchone()
    return written


def _require_budget_currencies(conn: duckdb.DuckDBPyConnection) -> None:
    mismatches = conn.execute(read_sql("marts/budget_variance", "currency_mismatches")).fetchall()
    if mismatches:
        raise BudgetError(
            "\n".join(
                f"{budget_file}: currency: {budget_currency}, but the allocations of "
                f"{training_run!r} are billed in {billing_currencies}; RunLedger does not convert "
                "currencies, so set the budget's currency to the billing currency"
                for training_run, budget_file, budget_currency, billing_currencies in mismatches
            )
        )
