"""Spend spread by day over its charge period (the macro run_day_parts) and the threshold
crossings built on it: exact day parts, nothing crossed before a run's first usage."""

from __future__ import annotations

from collections import defaultdict
from datetime import date, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import duckdb
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipelines.budgets.tables import build_budget_alerts
from pipelines.plans.files import load_budgets_with_files
from pipelines.plans.tables import replace_budget_baselines
from pipelines.warehouse.connection import transaction
from tests.support.lake import memory_warehouse

INSERT_ALLOCATION = """
insert into cost_allocations (
    x_LineItemKey, x_SourceName, BillingPeriodStart, BillingCurrency, ChargePeriodStart, ChargePeriodEnd,
    x_CostCategory, training_run, allocation_method, allocation_ratio, billed_cost, effective_cost, gpu_hours
)
values ($key, 'aws-main', $period, 'USD', $start, $end, $category, $run, $method, 1, $cost, $cost, 0)
"""
INSERT_USAGE_LINE = """
insert into focus_line_items (
    x_LineItemKey, x_SourceName, x_SourceFormat, BillingPeriodStart, BillingCurrency, ChargePeriodStart,
    ChargePeriodEnd, ChargeCategory, x_CostCategory, EffectiveCost, BilledCost, x_GpuHours
)
values ($key, 'aws-main', 'test', $period, 'USD', $start, $end, $category, 'compute', 0, 0, 0)
"""
OCTOBER = datetime(2026, 10, 1)
NOVEMBER = datetime(2026, 11, 1)
# The demo's 13B run under the shared rules of docs/configuration.md: its share of the month's fees (split by
# fixed weights) is charged over the whole of October; its own usage begins on 2026-10-24.
BUDGET_13B = """\
training_run: llm-13b-ft-r2
currency: USD
window: {start: 2026-10-01, end: 2026-11-01}
fixed: {compute: 1000}
thresholds: {warning: 0.8, over: 1.0}
"""


@pytest.fixture(scope="module")
def conn() -> duckdb.DuckDBPyConnection:
    return memory_warehouse()


def allocate(
    conn: duckdb.DuckDBPyConnection,
    key: str,
    start: datetime,
    end: datetime,
    cost: Decimal,
    *,
    run: str = "run-a",
    method: str = "tag",
    category: str = "compute",
) -> None:
    conn.execute(
        INSERT_ALLOCATION,
        {
            "key": key,
            "period": start.replace(day=1, hour=0, minute=0, second=0),
            "start": start,
            "end": end,
            "category": category,
            "run": run,
            "method": method,
            "cost": cost,
        },
    )


moments = st.datetimes(min_value=datetime(2026, 9, 1), max_value=datetime(2026, 12, 31)).map(
    lambda moment: moment.replace(microsecond=0)
)
amounts = st.decimals(min_value=Decimal("-1e9"), max_value=Decimal("1e9"), places=10, allow_nan=False)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    lines=st.lists(
        st.tuples(moments, st.integers(min_value=0, max_value=62 * 24 * 3600), amounts), min_size=1, max_size=8
    )
)
def test_the_day_parts_of_every_line_sum_exactly_to_it(conn: duckdb.DuckDBPyConnection, lines) -> None:
    conn.execute("delete from cost_allocations")
    for number, (start, seconds, cost) in enumerate(lines):
        allocate(conn, f"line-{number}", start, start + timedelta(seconds=seconds), cost, run=f"run-{number}")

    parts = conn.execute("select training_run, charge_day, effective_cost from run_day_parts()").fetchall()

    by_run: dict[str, list[tuple[date, Decimal]]] = defaultdict(list)
    for run, day, cost in parts:
        by_run[run].append((day, cost))
    for number, (start, seconds, cost) in enumerate(lines):
        days = by_run[f"run-{number}"]
        assert sum(part for _, part in days) == cost
        end = start + timedelta(seconds=seconds)
        last_day = (end - timedelta(microseconds=1)).date() if seconds else start.date()
        assert {day for day, _ in days} <= {
            start.date() + timedelta(days=n) for n in range((last_day - start.date()).days + 1)
        }


def test_a_month_long_line_is_spread_by_the_seconds_of_each_day(conn: duckdb.DuckDBPyConnection) -> None:
    conn.execute("delete from cost_allocations")
    allocate(conn, "fee", OCTOBER, NOVEMBER, Decimal("31000.0000000001"))
    allocate(conn, "usage", datetime(2026, 10, 5, 3), datetime(2026, 10, 5, 4), Decimal("7"))

    parts = dict(conn.execute("select charge_day, effective_cost from run_day_parts()").fetchall())

    assert len(parts) == 31
    assert parts[date(2026, 10, 1)] == Decimal(1000)  # 31000.0000000001 x 86400 / 2678400, rounded
    assert parts[date(2026, 10, 5)] == Decimal(1007)
    assert parts[date(2026, 10, 31)] == Decimal("1000.0000000001")  # the last day takes the remainder
    assert sum(parts.values()) == Decimal("31007.0000000001")


def test_no_threshold_is_crossed_before_the_runs_first_usage(tmp_path: Path) -> None:
    conn = memory_warehouse()
    # 1500 of fees shared to the run over October: spread by day they alone reach the warning
    # (800) on 2026-10-17 and the estimate (1000) on 10-21, counted on their first day on 10-01;
    # its own usage begins on 2026-10-24 (50 that day and 50 on 10-25)
    allocate(conn, "sp-fee", OCTOBER, NOVEMBER, Decimal(1500), run="llm-13b-ft-r2", method="shared")
    for day in (24, 25):
        start = datetime(2026, 10, day, 10)
        allocate(conn, f"usage-{day}", start, start + timedelta(hours=1), Decimal(50), run="llm-13b-ft-r2")
        conn.execute(
            INSERT_USAGE_LINE,
            {"key": f"usage-{day}", "period": OCTOBER, "start": start, "end": start + timedelta(hours=1),
             "category": "Usage"},
        )  # fmt: skip
    (tmp_path / "budget.yaml").write_text(BUDGET_13B)
    with transaction(conn):
        replace_budget_baselines(conn, load_budgets_with_files(tmp_path))
        build_budget_alerts(conn)

    alerts = conn.execute(
        "select threshold, crossed_on, cumulative_cost, as_of from budget_alerts order by threshold_fraction"
    ).fetchall()

    # both reached on the first day of usage: 24 days of fees (each round(1500 / 31, 10)) + 50
    day_of_fees = Decimal("48.3870967742")
    assert [(threshold, day) for threshold, day, _, _ in alerts] == [
        ("warning", date(2026, 10, 24)),
        ("over", date(2026, 10, 24)),
    ]
    assert {cumulative for _, _, cumulative, _ in alerts} == {24 * day_of_fees + 50}
    assert alerts[0][3] == datetime(2026, 10, 25, 11)  # the newest hour with usage
