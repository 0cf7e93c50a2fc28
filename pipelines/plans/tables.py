"""Writes `budget_baselines` and `group_budgets`; the caller owns the transaction."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import duckdb

from pipelines.plans.estimate import baseline_rows
from pipelines.plans.schema import Budget, GroupBudget
from pipelines.plans.settings import AlertThresholds
from pipelines.warehouse.sql import read_sql
from pipelines.warehouse.step_inputs import build_if_changed, rows_inputs


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


def group_budget_rows(group: GroupBudget, path: Path | str) -> list[dict]:
    """The `group_budgets` rows of one group budget: one per category of its amount (`total` for
    an amount given as one number)."""
    return [
        {
            "scope_kind": group.scope_kind,
            "scope": group.scope_value,
            "period_kind": "monthly" if group.period else "window",
            "window": None if group.window is None else {"start": group.window.start, "end": group.window.end},
            "from_period": None if group.from_ is None else f"{group.from_}-01",
            "cost_category": category,
            "currency": group.currency,
            "amount": amount,
            "thresholds": {"warning": group.thresholds.warning, "over": group.thresholds.over},
            "budget_file": str(path),
        }
        for category, amount in group.amounts.items()
    ]


def replace_group_budgets_if_changed(
    conn: duckdb.DuckDBPyConnection, groups_with_files: Iterable[tuple[GroupBudget, Path | str]]
) -> bool:
    """Replaces every row of `group_budgets` with the given group budgets' rows, unless the table
    already holds the same rows (step_inputs).

    Returns:
        True when the table was replaced.
    """
    rows = [row for group, path in groups_with_files for row in group_budget_rows(group, path)]

    def write() -> None:
        conn.execute(read_sql("inputs/group_budgets", "delete"))
        if rows:
            conn.executemany(read_sql("inputs/group_budgets", "insert"), rows)

    return build_if_changed(conn, rows_inputs("group_budgets", rows, ("inputs/group_budgets",)), write)
