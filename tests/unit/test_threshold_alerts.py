"""The threshold kinds of budget_alerts besides cost (GPU-hours, wall-clock, storage, daily spend
anomaly, idle GPUs) on hand-built allocations and events, against hand-computed crossings."""

from __future__ import annotations

from datetime import date, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import dagster as dg
import duckdb
import pytest

from pipelines.budgets.assets import threshold_check_result
from pipelines.budgets.delivery import current_alerts
from pipelines.budgets.tables import build_budget_alerts
from pipelines.config import load_config
from pipelines.config_rules import ConfigError
from pipelines.plans.files import BudgetError, load_budgets_with_files
from pipelines.plans.settings import AlertThresholds, IdleGpus
from pipelines.plans.tables import replace_budget_baselines
from pipelines.warehouse.connection import create_schema, transaction
from pipelines.warehouse.sql import dict_rows, read_sql

Connection = duckdb.DuckDBPyConnection

# llm-t: 1000 GPU-hours (6 x 1e9 x 3e11 FLOPs at 1000 TFLOP/s x 0.5 MFU), 100 wall hours on 10
# GPUs, compute 2500, storage (10 x 2 + 53) GB x 0.1 x 100 h / 730 = 1, data 205: total 2706.
# Its wall-clock levels are its own (0.5, 0.9); GPU-hours and storage take the cost fractions.
RUN_T = """\
training_run: llm-t
currency: USD
window: {start: 2026-10-01, end: 2026-11-01}
model: {parameters: 1e9, tokens: 3e11, gpu_peak_tflops: 1000, mfu: 0.5, overhead: 0, gpus: 10,
        gpu_hour_price: 2.5}
storage: {checkpoint_gb: 10, checkpoints_retained: 2, dataset_gb: 53, price_gb_month: 0.1}
fixed: {data: 205}
thresholds: {warning: 0.8, over: 1.0, wall_clock: {warning: 0.5, over: 0.9}}
"""
# llm-spiky: a fixed estimate far above its spend, so only its daily anomalies can fire.
RUN_SPIKY = """\
training_run: llm-spiky
currency: USD
window: {start: 2026-10-01, end: 2026-11-01}
fixed: {compute: 10000}
thresholds: {warning: 0.8, over: 1.0}
"""

INSERT_ALLOCATION = """
insert into cost_allocations (
    x_LineItemKey, x_SourceName, BillingPeriodStart, BillingCurrency, ChargePeriodStart,
    ChargePeriodEnd, ProviderName, SubAccountId, ServiceName, x_CostCategory, ResourceId, training_run,
    allocation_method, allocation_ratio, billed_cost, effective_cost, gpu_hours
)
values ($key, 'test', date '2026-10-01', 'USD', $start, $end, 'AWS', $account, $service, $category, $resource,
        $run, $method, 1, $cost, $cost, $gpu_hours)
"""


def allocate(
    conn: Connection,
    run: str | None,
    category: str,
    cost: str,
    start: datetime,
    end: datetime | None = None,
    *,
    gpu_hours: str = "0",
    resource: str | None = None,
    account: str | None = None,
    service: str | None = None,
    method: str | None = None,
) -> None:
    (count,) = conn.execute("select count(*) from cost_allocations").fetchone()
    conn.execute(
        INSERT_ALLOCATION,
        {
            "key": f"line-{count}",
            "start": start,
            "end": end or start + timedelta(hours=1),
            "category": category,
            "resource": resource,
            "run": run,
            "cost": Decimal(cost),
            "gpu_hours": Decimal(gpu_hours),
            "account": account,
            "service": service,
            "method": method or ("unattributed" if run is None else "tag"),
        },
    )


def add_event(conn: Connection, run: str, time: datetime, event: str, step: int, gpus: int | None = None) -> None:
    conn.execute(
        "insert into run_events (source_name, training_run, event_time, event, step, gpus, origin) "
        "values ('events', $run, $time, $event, $step, $gpus, 'test')",
        {"run": run, "time": time, "event": event, "step": step, "gpus": gpus},
    )


def day(number: int, hour: int = 0) -> datetime:
    return datetime(2026, 10, number, hour)


@pytest.fixture
def warehouse(tmp_path: Path) -> Connection:
    conn = duckdb.connect(str(tmp_path / "warehouse.duckdb"))
    create_schema(conn)
    budgets = tmp_path / "budgets"
    budgets.mkdir()
    (budgets / "llm-t.yaml").write_text(RUN_T)
    (budgets / "llm-spiky.yaml").write_text(RUN_SPIKY)
    with transaction(conn):
        replace_budget_baselines(conn, load_budgets_with_files(budgets))
    # llm-t: 500, 300 and 250 GPU-hours at 2.5 on October 2-4 (cumulative 500, 800, 1050 of
    # 1000 planned), storage 0.5 and 0.3 of its 1.0 (cumulative 0.8)
    for number, gpu_hours in ((2, 500), (3, 300), (4, 250)):
        allocate(conn, "llm-t", "compute", str(gpu_hours * Decimal("2.5")), day(number), gpu_hours=str(gpu_hours))
    allocate(conn, "llm-t", "storage", "0.5", day(2, 5))
    allocate(conn, "llm-t", "storage", "0.3", day(3, 5))
    # started October 2 00:00, last heard of on October 5 00:00: 72 hours of its 100 planned
    add_event(conn, "llm-t", day(2), "start", 0, gpus=10)
    add_event(conn, "llm-t", day(5), "checkpoint", 720)
    # llm-spiky: data preparation at 10 a day before its first GPU-hour (no baseline for training),
    # then 100, 100, 120, 100 a day, 350 (3.5 x the median 100) and 520 (5.2 x 100); on October 7
    # a two-day line of 1000 beside 100 of usage: not a day's usage, no anomaly
    for number in (28, 29, 30):
        allocate(conn, "llm-spiky", "data", "10", datetime(2026, 9, number, 3))
    for number, cost in ((1, "100"), (2, "100"), (3, "120"), (4, "100"), (5, "350"), (6, "520"), (7, "100")):
        allocate(conn, "llm-spiky", "compute", cost, day(number, 3), gpu_hours="40")
    allocate(conn, "llm-spiky", "compute", "1000", day(7), day(9))
    # i-idle, a GPU instance with no run: 7 hours from October 10 00:00 (its first hour in two
    # lines of 15 and 5), two hours of a run, then 25 hours from October 11 00:00, at 20 an hour;
    # i-short: 6 hours with no run, not more than 6
    allocate(conn, None, "compute", "15", day(10), gpu_hours="6", resource="i-idle")
    allocate(conn, None, "compute", "5", day(10), gpu_hours="2", resource="i-idle")
    for hour in range(1, 7):
        allocate(conn, None, "compute", "20", day(10, hour), gpu_hours="8", resource="i-idle")
        allocate(conn, None, "compute", "20", day(10, hour), gpu_hours="8", resource="i-short")
    allocate(conn, "llm-spiky", "compute", "40", day(10, 7), day(10, 9), gpu_hours="16", resource="i-idle")
    for hour in range(25):
        allocate(conn, None, "compute", "20", day(11) + timedelta(hours=hour), gpu_hours="8", resource="i-idle")
    # neither idle nor a GPU: a storage line without a run
    allocate(conn, None, "storage", "999", day(10), day(12), resource="bucket-x")
    # the source's bill reaches October 13 00:00 (its newest hour with usage): every day above counts
    conn.execute(
        "insert into focus_line_items (x_LineItemKey, x_SourceName, x_SourceFormat, x_CostCategory, x_GpuHours, "
        "ChargeCategory, BillingPeriodStart, ChargePeriodStart, ChargePeriodEnd, BilledCost, EffectiveCost) values "
        "('as-of', 'test', 'focus', 'compute', 0, 'Usage', date '2026-10-01', timestamp '2026-10-12 23:00', "
        "timestamp '2026-10-13 00:00', 0, 0)"
    )
    return conn


def alert_rows(conn: Connection, settings: AlertThresholds | None = None) -> dict[tuple, tuple]:
    with transaction(conn):
        build_budget_alerts(conn, settings)
    rows = conn.execute(
        "select kind, coalesce(training_run, resource_id), threshold, crossed_on, threshold_amount, observed, "
        "cumulative_cost, unit from budget_alerts"
    ).fetchall()
    return {(kind, subject, threshold, crossed_on): tuple(rest) for kind, subject, threshold, crossed_on, *rest in rows}


def test_each_threshold_kind_fires_on_its_hand_computed_day(warehouse: Connection) -> None:
    rows = alert_rows(warehouse)

    assert {key: value for key, value in rows.items() if key[0] != "cost"} == {
        # 800 of 1000 GPU-hours on October 3, 1050 on October 4; cost so far 1250.5 + 750.3, + 625
        ("gpu_hours", "llm-t", "warning", date(2026, 10, 3)): (
            Decimal(800),
            Decimal(800),
            Decimal("2000.8"),
            "GPU-hours",
        ),
        ("gpu_hours", "llm-t", "over", date(2026, 10, 4)): (
            Decimal(1000),
            Decimal(1050),
            Decimal("2625.8"),
            "GPU-hours",
        ),
        # 0.8 of the storage estimate 1.0 on October 3
        ("storage", "llm-t", "warning", date(2026, 10, 3)): (
            Decimal("0.8"),
            Decimal("0.8"),
            Decimal("2000.8"),
            "USD",
        ),
        # 50 of 100 planned hours at October 4 02:00; 72 hours by the end of the day (the last event);
        # 90 hours (October 5 18:00) are not reached
        ("wall_clock", "llm-t", "warning", date(2026, 10, 4)): (
            Decimal(50),
            Decimal(72),
            Decimal("2625.8"),
            "hours",
        ),
        # 350 >= 3 x 100 on October 5; 520 >= 5 x 100 on October 6 (median of 100, 100, 120, 100, 350);
        # spent so far 30 + 770 and 30 + 1290
        ("daily_spend_anomaly", "llm-spiky", "warning", date(2026, 10, 5)): (
            Decimal(300),
            Decimal(350),
            Decimal(800),
            "USD",
        ),
        ("daily_spend_anomaly", "llm-spiky", "warning", date(2026, 10, 6)): (
            Decimal(300),
            Decimal(520),
            Decimal(1320),
            "USD",
        ),
        ("daily_spend_anomaly", "llm-spiky", "over", date(2026, 10, 6)): (
            Decimal(500),
            Decimal(520),
            Decimal(1320),
            "USD",
        ),
        # more than 6 idle hours on October 10 (7 x 20 = 140); more than 24 in the stretch from
        # October 11, its 25th hour beginning October 12 00:00 (25 x 20 = 500)
        ("idle_gpus", "i-idle", "warning", date(2026, 10, 10)): (Decimal(6), Decimal(7), Decimal(140), "hours"),
        ("idle_gpus", "i-idle", "over", date(2026, 10, 12)): (Decimal(24), Decimal(25), Decimal(500), "hours"),
    }
    # the cost threshold of llm-t: 2625.8 >= 0.8 x 2706 on October 4
    assert rows["cost", "llm-t", "warning", date(2026, 10, 4)] == (
        Decimal("2164.8"),
        Decimal("2625.8"),
        Decimal("2625.8"),
        "USD",
    )


def test_configured_levels_move_the_crossings(warehouse: Connection, tmp_path: Path) -> None:
    settings = AlertThresholds.model_validate(
        {
            "gpu_hours": {"warning": "0.9", "over": "1.1"},
            "daily_spend_anomaly": {"warning": 4, "over": 6, "trailing_days": 2, "minimum_days": 2},
            "idle_gpus": IdleGpus(warning_hours=Decimal(7), over_hours=Decimal(30)),
        }
    )
    with transaction(warehouse):
        replace_budget_baselines(warehouse, load_budgets_with_files(tmp_path / "budgets"), settings)
    rows = alert_rows(warehouse, settings)

    # 900 GPU-hours reached on October 4 (1050), 1100 never
    assert [key for key in rows if key[0] == "gpu_hours"] == [("gpu_hours", "llm-t", "warning", date(2026, 10, 4))]

    # October 6 against the median of October 4-5 (100, 350): 225 x 4 = 900 > 520; no day is 4x
    assert not [key for key in rows if key[0] == "daily_spend_anomaly"]
    # the first stretch (7 hours) is not more than 7; the second is, on October 11, and never more than 30
    assert [key for key in rows if key[0] == "idle_gpus"] == [("idle_gpus", "i-idle", "warning", date(2026, 10, 11))]


def test_spend_beyond_runs_alerts_per_cost_category_and_unattributed_account_and_service(
    warehouse: Connection,
) -> None:
    # network: the NAT gateway of account 999, with no run, at 10 a day, then 40 on October 5 (4 x
    # the median 10): the cost category's series and the account and service's both reach 3 x
    for number, cost in ((1, "10"), (2, "10"), (3, "10"), (4, "10"), (5, "40")):
        allocate(warehouse, None, "network", cost, day(number, 3), account="999", service="NAT Gateway")
    # monitoring: 5 a day with no run; llm-new starts on October 5 at 100 a day, no anomaly of the
    # category while it starts (its first 7 days are left out of the days judged), then 600 on
    # October 13 against the median 105 of October 6-12: that spike is one
    for number in range(1, 14):
        allocate(warehouse, None, "monitoring", "5", day(number, 2), account="999", service="CloudWatch")
        if number >= 5:
            allocate(warehouse, "llm-new", "monitoring", "600" if number == 13 else "100", day(number, 2))
    # a shared cluster's idle capacity, 10 a day then 100: not unattributed spend of its account
    # (idle_gpus watches it), and too little to move the compute category
    for number in range(1, 6):
        cost = "100" if number == 5 else "10"
        allocate(warehouse, None, "compute", cost, day(number, 4), account="999", service="EC2", method="idle_capacity")
    rows = alert_rows(warehouse)

    beyond_runs = warehouse.execute(
        "select series, threshold, crossed_on, threshold_amount, observed, cumulative_cost from budget_alerts "
        "where training_run is null and kind = 'daily_spend_anomaly' order by all"
    ).fetchall()
    assert beyond_runs == [
        (
            "spend of cost category monitoring (USD)",
            "over",
            date(2026, 10, 13),
            Decimal(525),
            Decimal(605),
            Decimal(605),
        ),
        (
            "spend of cost category monitoring (USD)",
            "warning",
            date(2026, 10, 13),
            Decimal(315),
            Decimal(605),
            Decimal(605),
        ),
        ("spend of cost category network (USD)", "warning", date(2026, 10, 5), Decimal(30), Decimal(40), Decimal(40)),
        (
            "unattributed spend of account 999, service NAT Gateway (USD)",
            "warning",
            date(2026, 10, 5),
            Decimal(30),
            Decimal(40),
            Decimal(40),
        ),
    ]
    # the run's own alerts are unchanged: llm-new has no budget
    assert not [key for key in rows if key[1] == "llm-new"]
    alerts = {alert.alert_key: alert for alert in current_alerts(warehouse)}
    network = alerts["spend of cost category network (USD):daily_spend_anomaly:warning:2026-10-05"]
    assert (network.training_run, network.owner) == (None, None)
    assert network.text() == (
        "RunLedger: spend of cost category network (USD): spend of cost category network (USD) daily_spend_anomaly: "
        "40.00 USD reached the warning level 30.00 USD on 2026-10-05, 3.00 x the trailing median"
    )
    # every alert has its own key: a run's anomalies on two days too
    assert "llm-spiky:daily_spend_anomaly:warning:2026-10-05" in alerts
    assert "llm-spiky:daily_spend_anomaly:warning:2026-10-06" in alerts
    assert len(alerts) == warehouse.execute("select count(*) from budget_alerts").fetchone()[0]


def test_each_kind_is_an_asset_check_warning_at_warning_and_error_at_over(warehouse: Connection) -> None:
    alert_rows(warehouse)
    crossings = dict_rows(warehouse.execute(read_sql("marts/budget_alerts", "kind_crossings")))

    storage = threshold_check_result("storage", crossings)
    gpu_hours = threshold_check_result("gpu_hours", crossings)
    quiet = threshold_check_result("wall_clock", [row for row in crossings if row["kind"] != "wall_clock"])

    assert (storage.passed, storage.severity) == (False, dg.AssetCheckSeverity.WARN)
    assert (gpu_hours.passed, gpu_hours.severity) == (False, dg.AssetCheckSeverity.ERROR)
    assert quiet.passed
    assert gpu_hours.description == (
        "warning: llm-t gpu_hours: 800.00 GPU-hours reached the warning level 800.00 GPU-hours on 2026-10-03; "
        "over: llm-t gpu_hours: 1050.00 GPU-hours reached the over level 1000.00 GPU-hours on 2026-10-04"
    )


def test_bad_levels_are_errors_naming_the_file_and_key(tmp_path: Path) -> None:
    budget = tmp_path / "budgets" / "llm-t.yaml"
    budget.parent.mkdir()
    budget.write_text(RUN_T.replace("wall_clock: {warning: 0.5, over: 0.9}", "wallclock: {warning: 0.9, over: 0.5}"))
    with pytest.raises(BudgetError, match=r"llm-t\.yaml: thresholds\.wallclock: unknown key.*wall_clock"):
        load_budgets_with_files(budget.parent)
    budget.write_text(RUN_T.replace("wall_clock: {warning: 0.5, over: 0.9}", "wall_clock: {warning: 0.9, over: 0.5}"))
    with pytest.raises(BudgetError, match=r"llm-t\.yaml: thresholds\.wall_clock\.over: must be at least warning"):
        load_budgets_with_files(budget.parent)

    config = tmp_path / "runledger.yaml"
    config.write_text("thresholds:\n  idle_gpus: {warning_hours: 10, over_hours: 5}\n")
    with pytest.raises(
        ConfigError, match=r"runledger\.yaml: thresholds\.idle_gpus\.over_hours: .*at least warning_hours"
    ):
        load_config(config)
    config.write_text("thresholds:\n  daily_spend_anomaly: {trailing_days: 0}\n")
    with pytest.raises(ConfigError, match=r"thresholds\.daily_spend_anomaly\.trailing_days"):
        load_config(config)
