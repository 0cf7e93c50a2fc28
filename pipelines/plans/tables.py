"""Writes `budget_baselines`; the caller owns the transaction."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import duckdb

from pipelines.plans.estimate import baseline_rows
from pipelines.plans.schema import Budget
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
