"""budget_baselines and budget_variance in a real DuckDB file, against hand-computed numbers."""

from __future__ import annotations

import random
from collections.abc import Iterator
from datetime import date, datetime
from decimal import ROUND_HALF_UP, Decimal, localcontext
from pathlib import Path
from typing import Any

import duckdb
import pytest

from pipelines.budgets.tables import build_budget_alerts, build_budget_variance
from pipelines.plans.files import BudgetError, load_budgets_with_files
from pipelines.plans.tables import replace_budget_baselines
from pipelines.warehouse.connection import create_schema, transaction
from pipelines.warehouse.sql import read_sql

Connection = duckdb.DuckDBPyConnection
VarianceRows = dict[tuple[str, str], dict[str, Any]]

# llm-a's model gives exactly 1000 GPU-hours: 6 x 1e9 x 3e11 = 1.8e21 FLOPs at 1000 TFLOP/s x 0.5
# MFU x 3600 s = 1.8e18 FLOPs per GPU-hour. Compute 1000 x 2.5 = 2500; 1000 wall hours on 1 GPU;
# storage (10 x 2 + 53) GB x 0.01 x 1000 h / 730 = 1; network 100 x 0.05 = 5; data 200; support 0.
RUN_A = """\
training_run: llm-a
currency: USD
window: {start: 2026-10-01, end: 2026-11-01}
model: {parameters: 1e9, tokens: 3e11, gpu_peak_tflops: 1000, mfu: 0.5, overhead: 0, gpus: 1,
        gpu_hour_price: 2.5}
storage: {checkpoint_gb: 10, checkpoints_retained: 2, dataset_gb: 53, price_gb_month: 0.01}
network: {egress_gb: 100, price_gb: 0.05}
fixed: {data: 200, support: 0}
thresholds: {warning: 0.8, over: 1.0}
"""
RUN_A_ESTIMATES = {
    "compute": Decimal(2500),
    "storage": Decimal(1),
    "network": Decimal(5),
    "data": Decimal(200),
    "support": Decimal(0),
}
RUN_ENDED = """\
training_run: llm-ended
currency: USD
window: {start: 2026-09-01, end: 2026-09-16}
fixed: {data: 100}
thresholds: {warning: 0.8, over: 1.0}
"""
RUN_FUTURE = """\
training_run: llm-future
currency: USD
window: {start: 2026-12-01, end: 2027-01-01}
fixed: {data: 100}
thresholds: {warning: 0.8, over: 1.0}
"""
# The newest usage: 500 hours after llm-a's first usage (2026-09-30 00:00), halfway through its
# planned 1000 wall-clock hours (llm-a has no events: a linear forecast).
AS_OF = datetime(2026, 10, 20, 20)
OCTOBER = datetime(2026, 10, 1)

INSERT_ALLOCATION = """
insert into cost_allocations (
    x_LineItemKey, x_SourceName, BillingPeriodStart, BillingCurrency, ChargePeriodStart,
    ChargePeriodEnd, ProviderName, x_CostCategory, training_run, allocation_method,
    allocation_ratio, billed_cost, effective_cost, gpu_hours
)
values ($key, 'test', $period, $currency, $charge_start, $charge_end, 'AWS', $category, $run,
        'tag', 1, $cost, $cost, $gpu_hours)
"""
# the line item of each allocation: usage, whose newest end is the data's as_of
INSERT_LINE_ITEM = """
insert into focus_line_items (
    x_LineItemKey, x_SourceName, x_SourceFormat, BillingPeriodStart, BillingCurrency, ChargePeriodStart,
    ChargePeriodEnd, ChargeCategory, x_CostCategory, EffectiveCost, BilledCost, x_GpuHours
)
values ($key, 'test', 'test', $period, $currency, $charge_start, $charge_end, 'Usage', $category, $cost, $cost,
        $gpu_hours)
"""


@pytest.fixture
def warehouse(tmp_path: Path) -> Iterator[Connection]:
    conn = duckdb.connect(str(tmp_path / "warehouse.duckdb"))
    create_schema(conn)
    yield conn
    conn.close()


def write_budgets(folder: Path, *texts: str) -> Path:
    folder.mkdir(exist_ok=True)
    for number, text in enumerate(texts):
        (folder / f"budget-{number}.yaml").write_text(text)
    return folder


def allocate(
    conn: Connection,
    run: str | None,
    category: str,
    cost: str,
    *,
    gpu_hours: str = "0",
    period: datetime = OCTOBER,
    charge_end: datetime = datetime(2026, 10, 10),
    currency: str = "USD",
) -> None:
    (count,) = conn.execute("select count(*) from cost_allocations").fetchone()
    values = {
        "key": f"line-{count}",
        "period": period,
        "currency": currency,
        "charge_start": charge_end.replace(hour=0),
        "charge_end": charge_end,
        "category": category,
        "cost": Decimal(cost),
        "gpu_hours": Decimal(gpu_hours),
    }
    conn.execute(INSERT_ALLOCATION, values | {"run": run})
    conn.execute(INSERT_LINE_ITEM, values)


def build(conn: Connection, budgets: Path) -> int:
    with transaction(conn):
        replace_budget_baselines(conn, load_budgets_with_files(budgets))
        return build_budget_variance(conn)


def variance_rows(conn: Connection) -> VarianceRows:
    cursor = conn.execute("select * from budget_variance")
    columns = [column[0] for column in cursor.description]
    return {(row[0], row[1]): dict(zip(columns, row)) for row in cursor.fetchall()}


def half_up(numerator: Decimal, denominator: Decimal) -> Decimal:
    """numerator / denominator rounded to 10 decimals half away from zero, as the SQL does."""
    with localcontext(prec=80):
        return (numerator / denominator).quantize(Decimal("1e-10"), rounding=ROUND_HALF_UP)


@pytest.fixture
def scenario(warehouse: Connection, tmp_path: Path) -> VarianceRows:
    """llm-a halfway through its window, one category per status; two more runs around it."""
    allocate(warehouse, "llm-a", "compute", "1000.1234567891", gpu_hours="400.25")
    allocate(
        warehouse,
        "llm-a",
        "compute",
        "250.3765432109",
        gpu_hours="79.75",
        period=datetime(2026, 9, 1),
        charge_end=datetime(2026, 9, 30, 23),
    )
    allocate(warehouse, "llm-a", "storage", "0.8")
    allocate(warehouse, "llm-a", "network", "5.0000000001")
    allocate(warehouse, "llm-a", "data", "50")
    allocate(warehouse, "llm-a", "monitoring", "12.34")
    september = {"period": datetime(2026, 9, 1), "charge_end": datetime(2026, 9, 10)}
    allocate(warehouse, "llm-ended", "data", "95", **september)
    allocate(warehouse, "llm-without-budget", "compute", "99", gpu_hours="10")
    allocate(warehouse, None, "storage", "7", charge_end=AS_OF)
    budgets = write_budgets(tmp_path / "budgets", RUN_A, RUN_ENDED, RUN_FUTURE)
    assert build(warehouse, budgets) == 7 + 2 + 2
    return variance_rows(warehouse)


def test_rows_cover_budgeted_and_actual_categories_of_budgeted_runs(scenario: VarianceRows) -> None:
    run_a_categories = ("compute", "storage", "network", "data", "support", "monitoring", "total")
    assert set(scenario) == {("llm-a", category) for category in run_a_categories} | {
        ("llm-ended", "data"),
        ("llm-ended", "total"),
        ("llm-future", "data"),
        ("llm-future", "total"),
    }
    assert {row["as_of"] for row in scenario.values()} == {AS_OF}
    assert {row["currency"] for row in scenario.values()} == {"USD"}


def test_actuals_and_variances_are_exact(scenario: VarianceRows) -> None:
    actuals = {
        "compute": Decimal("1250.5"),  # both billing periods
        "storage": Decimal("0.8"),
        "network": Decimal("5.0000000001"),
        "data": Decimal("50"),
        "support": Decimal("0"),
        "monitoring": Decimal("12.34"),
    }
    for category, actual in actuals.items():
        row = scenario["llm-a", category]
        estimated = RUN_A_ESTIMATES.get(category, Decimal(0))
        assert row["estimated_cost"] == estimated
        assert row["actual_cost"] == actual
        assert row["variance"] == actual - estimated
    assert scenario["llm-a", "compute"]["variance_pct"] == Decimal("-0.4998")
    assert scenario["llm-a", "data"]["variance_pct"] == Decimal("-0.75")
    assert scenario["llm-a", "network"]["variance_pct"] == Decimal("0")  # 2e-11 rounds to 0
    assert scenario["llm-a", "monitoring"]["variance_pct"] is None  # nothing budgeted


def test_each_category_row_is_fixed_or_elastic_and_both_sum_to_the_total(scenario: VarianceRows) -> None:
    behaviors = {category: row["cost_behavior"] for (run, category), row in scenario.items() if run == "llm-a"}
    # monitoring is spent without a budget line: fixed, as the model derives only compute, storage and network
    assert behaviors == {
        "compute": "elastic",
        "storage": "elastic",
        "network": "elastic",
        "data": "fixed",
        "support": "fixed",
        "monitoring": "fixed",
        "total": None,
    }
    for behavior, estimated, actual in (
        ("elastic", Decimal(2506), Decimal("1256.3000000001")),
        ("fixed", Decimal(200), Decimal("62.34")),
    ):
        rows = [row for (run, _), row in scenario.items() if run == "llm-a" and row["cost_behavior"] == behavior]
        assert sum(row["estimated_cost"] for row in rows) == estimated
        assert sum(row["actual_cost"] for row in rows) == actual
    total = scenario["llm-a", "total"]
    assert (total["estimated_cost"], total["actual_cost"]) == (Decimal(2706), Decimal("1318.6400000001"))


def test_spend_of_an_elastic_category_without_a_budget_line_is_elastic(warehouse: Connection, tmp_path: Path) -> None:
    allocate(warehouse, "llm-ended", "compute", "30")
    allocate(warehouse, "llm-ended", "labor", "4000")
    build(warehouse, write_budgets(tmp_path / "budgets", RUN_ENDED.replace("{data: 100}", "{data: 100, labor: 5000}")))

    rows = variance_rows(warehouse)

    assert {category: row["cost_behavior"] for (_, category), row in rows.items()} == {
        "compute": "elastic",
        "data": "fixed",
        "labor": "fixed",
        "total": None,
    }
    assert rows["llm-ended", "labor"]["variance"] == Decimal(-1000)


def test_compute_splits_its_variance_into_rate_and_usage(scenario: VarianceRows) -> None:
    compute = scenario["llm-a", "compute"]

    assert compute["estimated_gpu_hours"] == Decimal(1000)
    assert compute["estimated_rate"] == Decimal("2.5")
    assert compute["actual_gpu_hours"] == Decimal(480)
    assert compute["actual_rate"] == Decimal("2.6052083333")  # 1250.5 / 480
    assert compute["usage_variance"] == Decimal(-1300)  # (480 - 1000) x 2.5
    assert compute["rate_variance"] == Decimal("50.5")  # (1250.5 / 480 - 2.5) x 480
    assert compute["rate_variance"] + compute["usage_variance"] == compute["variance"]
    for key, row in scenario.items():
        if key[1] != "compute":
            assert row["actual_gpu_hours"] is None and row["rate_variance"] is None


@pytest.mark.parametrize(
    ("run", "category", "status"),
    [
        ("llm-a", "data", "under"),  # 50 < 0.9 x 200 x 0.5
        ("llm-a", "compute", "on_track"),  # 0.9 x 2500 x 0.5 <= 1250.5 < 0.8 x 2500
        ("llm-a", "storage", "warning"),  # 0.8 x 1 <= 0.8 < 1
        ("llm-a", "network", "over"),  # 5.0000000001 >= 1.0 x 5
        ("llm-a", "monitoring", "over"),  # spent without a budget
        ("llm-a", "support", "on_track"),  # nothing budgeted, nothing spent
        ("llm-a", "total", "on_track"),  # 0.9 x 1453 <= 1318.64: the fixed data pro rata whole
        ("llm-ended", "data", "within"),  # ended 5 % under its estimate
        ("llm-future", "data", "on_track"),  # nothing of the run is done yet
    ],
)
def test_status_follows_the_thresholds(scenario: VarianceRows, run: str, category: str, status: str) -> None:
    assert scenario[run, category]["status"] == status


def test_forecast_of_a_run_without_events_is_linear_on_its_planned_wall_clock(scenario: VarianceRows) -> None:
    # 500 of the planned 1000 wall-clock hours since llm-a's first usage: done 0.5
    assert scenario["llm-a", "compute"]["forecast_at_completion"] == Decimal("2501")
    assert scenario["llm-a", "network"]["forecast_at_completion"] == Decimal("10.0000000002")
    assert scenario["llm-a", "data"]["forecast_at_completion"] == Decimal(200)  # fixed: its estimate, once
    # 2501 + 1.6 + 10.0000000002 + 200 + 0 + 24.68 (monitoring, not budgeted: elastic)
    assert scenario["llm-a", "total"]["forecast_at_completion"] == Decimal("2737.2800000002")
    assert scenario["llm-ended", "data"]["forecast_at_completion"] == Decimal(95)  # ended: the actual
    assert scenario["llm-future", "data"]["forecast_at_completion"] == Decimal(100)  # fixed, not started
    assert {row["forecast_method"] for key, row in scenario.items() if key[0] == "llm-a"} == {"linear"}
    assert scenario["llm-ended", "total"]["forecast_method"] == "actual"


def test_total_row_is_the_sum_of_the_category_rows(scenario: VarianceRows) -> None:
    for run in ("llm-a", "llm-ended", "llm-future"):
        categories = [row for (row_run, category), row in scenario.items() if row_run == run and category != "total"]
        total = scenario[run, "total"]
        for column in ("estimated_cost", "actual_cost", "variance"):
            assert total[column] == sum(row[column] for row in categories)
    total = scenario["llm-a", "total"]
    assert total["estimated_cost"] == Decimal(2706)
    assert total["actual_cost"] == Decimal("1318.6400000001")
    assert total["variance_pct"] == half_up(Decimal("-1387.3599999999"), Decimal(2706))
    assert total["estimated_gpu_hours"] is None and total["usage_variance"] is None


def test_rebuilding_replaces_the_previous_rows(scenario: VarianceRows, warehouse: Connection, tmp_path: Path) -> None:
    only_ended = write_budgets(tmp_path / "fewer", RUN_ENDED)

    assert build(warehouse, only_ended) == 2
    assert set(variance_rows(warehouse)) == {("llm-ended", "data"), ("llm-ended", "total")}
    assert warehouse.execute("select count(*) from budget_baselines").fetchone() == (1,)


def test_empty_warehouse_gives_estimates_with_nothing_elapsed(warehouse: Connection, tmp_path: Path) -> None:
    build(warehouse, write_budgets(tmp_path / "budgets", RUN_A))

    rows = variance_rows(warehouse)

    assert rows["llm-a", "total"]["actual_cost"] == 0
    assert rows["llm-a", "total"]["as_of"] is None
    assert rows["llm-a", "total"]["forecast_at_completion"] is None
    assert {row["status"] for row in rows.values()} == {"on_track"}


def test_baselines_store_exact_estimates(warehouse: Connection, tmp_path: Path) -> None:
    # Decimal('1.2E+4') has a positive exponent, which DuckDB binds as 1.2: the model quantizes.
    budgets = write_budgets(tmp_path / "budgets", RUN_A.replace("data: 200", "data: 1.2e+4"))

    with transaction(warehouse):
        written = replace_budget_baselines(warehouse, load_budgets_with_files(budgets))

    rows = warehouse.execute(
        "select cost_category, estimated_cost, estimated_gpu_hours, estimated_rate, thresholds, "
        '"window", budget_file from budget_baselines order by cost_category'
    ).fetchall()
    assert written == len(rows) == 5
    by_category = {row[0]: row[1:] for row in rows}
    assert by_category["data"][0] == Decimal(12000)
    assert by_category["compute"][:3] == (Decimal(2500), Decimal(1000), Decimal("2.5"))
    assert by_category["storage"][1:3] == (None, None)
    assert by_category["compute"][3] == {"warning": Decimal("0.8"), "over": Decimal(1)}
    assert str(by_category["compute"][4]["end"]) == "2026-11-01"
    assert by_category["compute"][5] == str(budgets / "budget-0.yaml")


def test_large_amounts_keep_every_decimal(warehouse: Connection, tmp_path: Path) -> None:
    # A 1T-parameter model on 100T tokens: about 4.2e8 GPU-hours and 5.3e9 in compute, where
    # DECIMAL(38, 10) x DECIMAL(38, 10) has only 18 integer digits and DuckDB divides in DOUBLE.
    big = RUN_A.replace("parameters: 1e9, tokens: 3e11", "parameters: 1e12, tokens: 1e14").replace(
        "gpu_hour_price: 2.5", "gpu_hour_price: 12.5678901234"
    )
    actual_cost = Decimal("6123456789.1234567891")
    actual_gpu_hours = Decimal("450123456.9876543211")
    allocate(
        warehouse,
        "llm-a",
        "compute",
        str(actual_cost),
        gpu_hours=str(actual_gpu_hours),
        charge_end=AS_OF,
    )

    build(warehouse, write_budgets(tmp_path / "budgets", big))
    compute = variance_rows(warehouse)["llm-a", "compute"]

    estimated_gpu_hours, estimated_rate = compute["estimated_gpu_hours"], compute["estimated_rate"]
    with localcontext(prec=80):
        usage = ((actual_gpu_hours - estimated_gpu_hours) * estimated_rate).quantize(
            Decimal("1e-10"), rounding=ROUND_HALF_UP
        )
    assert compute["actual_cost"] == actual_cost
    assert compute["variance"] == actual_cost - compute["estimated_cost"]
    assert compute["usage_variance"] == usage
    assert compute["rate_variance"] == compute["variance"] - usage
    assert compute["actual_rate"] == half_up(actual_cost, actual_gpu_hours)
    assert compute["variance_pct"] == half_up(compute["variance"], compute["estimated_cost"])
    # 20 hours (10-20 00:00 to 20:00) of the planned wall-clock, estimated GPU-hours on 1 GPU
    done = half_up(Decimal(20 * 3600), estimated_gpu_hours * 3600)
    assert compute["forecast_at_completion"] == half_up(actual_cost, done)


def test_decimal_divide_matches_exact_division(warehouse: Connection) -> None:
    warehouse.execute(read_sql("schema/macros"))
    generator = random.Random(20261001)
    for _ in range(500):
        numerator = Decimal(generator.randrange(-(10**27), 10**27)).scaleb(-10)
        denominator = Decimal(generator.randrange(1, 10 ** generator.randrange(2, 26))).scaleb(-10)
        if abs(numerator / denominator) >= Decimal("1e17"):
            continue
        (quotient,) = warehouse.execute(
            "select decimal_divide(cast($1 as decimal(38, 10)), cast($2 as decimal(38, 10)))",
            [numerator, -denominator],
        ).fetchone()
        assert quotient == half_up(numerator, -denominator)
    assert warehouse.execute("select decimal_divide(1, 0)").fetchone() == (None,)
    with pytest.raises(duckdb.OutOfRangeException):
        warehouse.execute("select decimal_divide(cast(9e17 as decimal(38, 10)), 1)").fetchone()


def test_allocations_in_another_currency_stop_the_build(warehouse: Connection, tmp_path: Path) -> None:
    budgets = write_budgets(tmp_path / "budgets", RUN_A)
    allocate(warehouse, "llm-a", "compute", "10", currency="EUR")

    with pytest.raises(BudgetError) as raised:
        build(warehouse, budgets)

    assert str(raised.value).startswith(
        f"{budgets / 'budget-0.yaml'}: currency: USD, but the allocations of 'llm-a' are billed "
        "in EUR; RunLedger does not convert currencies"
    )
    rolled_back = warehouse.execute("select count(*) from budget_baselines").fetchone()
    assert rolled_back == (0,)


def test_effective_mfu_implied_by_the_actual_gpu_hours_once_the_window_ended(
    warehouse: Connection, tmp_path: Path
) -> None:
    # llm-a's 6 N D = 1.8e21 FLOPs take 1.8e21 / (1000e12 x 3600) = 500 GPU-hours at the full
    # peak: 500 / 1000 estimated GPU-hours = 0.5 effective MFU; 500 / 1250 actual = 0.4, and
    # 3e11 tokens / (1250 x 3600 GPU-seconds) = 66,666.67 tokens per second per GPU.
    september = RUN_A.replace("{start: 2026-10-01, end: 2026-11-01}", "{start: 2026-09-01, end: 2026-10-01}")
    allocate(warehouse, "llm-a", "compute", "2600", gpu_hours="1250", charge_end=datetime(2026, 9, 20))
    allocate(warehouse, None, "storage", "1", charge_end=AS_OF)
    build(warehouse, write_budgets(tmp_path / "ended", september))
    compute = variance_rows(warehouse)["llm-a", "compute"]

    assert compute["estimated_effective_mfu"] == Decimal("0.5")
    assert compute["actual_effective_mfu"] == Decimal("0.4")
    assert compute["actual_tokens_per_gpu_second"] == Decimal("66666.6666666667")


def test_effective_mfu_waits_for_the_end_of_the_window(scenario: VarianceRows) -> None:
    compute = scenario["llm-a", "compute"]  # halfway through its window

    assert compute["estimated_effective_mfu"] == Decimal("0.5")
    assert compute["actual_effective_mfu"] is None
    assert compute["actual_tokens_per_gpu_second"] is None
    assert scenario["llm-a", "total"]["estimated_effective_mfu"] is None


RUN_ALERTS = """\
training_run: llm-alerts
currency: USD
window: {start: 2026-10-01, end: 2026-11-01}
fixed: {data: 600, compute: 400}
thresholds: {warning: 0.8, over: 1.0}
"""


def build_alerts(conn: Connection, budgets: Path) -> dict[tuple[str, str], tuple]:
    with transaction(conn):
        replace_budget_baselines(conn, load_budgets_with_files(budgets))
        build_budget_variance(conn)
        build_budget_alerts(conn)
    rows = conn.execute(
        "select training_run, threshold, threshold_amount, crossed_on, cumulative_cost from budget_alerts"
    ).fetchall()
    return {(run, threshold): tuple(rest) for run, threshold, *rest in rows}


@pytest.fixture
def alert_budgets(warehouse: Connection, tmp_path: Path) -> Path:
    """llm-alerts (estimate 1000: warning at 800, over at 1000) spends day by day in October."""
    spend = [
        (datetime(2026, 9, 30, 22), "compute", "300"),  # before its window, still its spend
        (datetime(2026, 10, 3, 23), "compute", "400"),  # cumulative 700
        (datetime(2026, 10, 4, 5), "data", "50"),
        (datetime(2026, 10, 4, 6), "compute", "50.0000000001"),  # 800.0000000001: warning
        (datetime(2026, 10, 5, 1), "compute", "-20"),  # a credit: 780.0000000001
        (datetime(2026, 10, 7, 9), "data", "219.9999999999"),  # 1000 exactly: over
        (datetime(2026, 10, 9, 9), "data", "5"),
    ]
    for charge_end, category, cost in spend:
        period = datetime(charge_end.year, charge_end.month, 1)
        allocate(warehouse, "llm-alerts", category, cost, charge_end=charge_end, period=period)
    allocate(warehouse, "llm-ended", "data", "79.99", charge_end=datetime(2026, 9, 10), period=datetime(2026, 9, 1))
    allocate(warehouse, "llm-without-budget", "compute", "5000")
    return write_budgets(tmp_path / "budgets", RUN_ALERTS, RUN_ENDED)


def test_alerts_record_the_first_day_each_threshold_was_reached(warehouse: Connection, alert_budgets: Path) -> None:
    alerts = build_alerts(warehouse, alert_budgets)

    # llm-ended: 79.99 < 0.8 x 100, no alert; runs without a budget never alert
    assert alerts == {
        ("llm-alerts", "warning"): (Decimal(800), date(2026, 10, 4), Decimal("800.0000000001")),
        ("llm-alerts", "over"): (Decimal(1000), date(2026, 10, 7), Decimal(1000)),
    }
    statuses = dict(
        warehouse.execute("select training_run, status from budget_variance where cost_category = 'total'").fetchall()
    )
    assert statuses == {"llm-alerts": "over", "llm-ended": "under"}


def test_alerts_are_recomputed_from_the_data_each_time(warehouse: Connection, alert_budgets: Path) -> None:
    first = build_alerts(warehouse, alert_budgets)
    assert build_alerts(warehouse, alert_budgets) == first

    # a restated bill without the 7 October line: the run never reached its over threshold
    warehouse.execute("delete from cost_allocations where effective_cost = 219.9999999999")
    again = build_alerts(warehouse, alert_budgets)

    assert again == {("llm-alerts", "warning"): first["llm-alerts", "warning"]}


def test_a_credit_below_the_threshold_keeps_the_crossing_day(warehouse: Connection, alert_budgets: Path) -> None:
    # 7 October is the first day the cumulative spend reaches 1000, though by then it had
    # dipped back below the warning threshold once; an earlier warning crossing is not repeated
    allocate(warehouse, "llm-alerts", "compute", "-100", charge_end=datetime(2026, 10, 10, 1))

    alerts = build_alerts(warehouse, alert_budgets)

    assert alerts["llm-alerts", "warning"][1] == date(2026, 10, 4)
    assert alerts["llm-alerts", "over"][1] == date(2026, 10, 7)
    total = warehouse.execute(
        "select actual_cost, status from budget_variance where training_run = 'llm-alerts' and cost_category = 'total'"
    ).fetchone()
    assert total == (Decimal("905"), "warning")  # it stays recorded as having crossed `over`
