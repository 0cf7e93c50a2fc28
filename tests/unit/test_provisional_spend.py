"""provisional_spend on hand-built allocations and events: spend since the newest billed hour
estimated from the events, then replaced by the bill on a later night with its error recorded."""

from __future__ import annotations

from datetime import datetime, timedelta
from decimal import Decimal
from pathlib import Path

import duckdb
import pytest

from pipelines.progress.provisional import build_provisional_spend
from pipelines.reports.data import ProvisionalSpend, fetch_rows
from pipelines.reports.run_report import provisional_paragraphs
from pipelines.warehouse.connection import create_schema, transaction
from pipelines.warehouse.sql import read_sql

Connection = duckdb.DuckDBPyConnection

INSERT_ALLOCATION = """
insert into cost_allocations (
    x_LineItemKey, x_SourceName, BillingPeriodStart, BillingCurrency, ChargePeriodStart,
    ChargePeriodEnd, ProviderName, x_CostCategory, ResourceId, training_run, allocation_method,
    allocation_ratio, billed_cost, effective_cost, gpu_hours
)
values ($key, 'test', date '2026-10-01', 'USD', $start, $end, 'AWS', $category, 'i-1', 'llm-p',
        'tag', 1, $cost, $cost, $gpu_hours)
"""


def bill_hours(conn: Connection, first: datetime, hours: int, cost: str, gpu_hours: str = "10") -> None:
    """Hourly GPU usage lines of llm-p from `first`, each of `cost` and `gpu_hours`."""
    for hour in range(hours):
        start = first + timedelta(hours=hour)
        (count,) = conn.execute("select count(*) from cost_allocations").fetchone()
        conn.execute(
            INSERT_ALLOCATION,
            {
                "key": f"line-{count}",
                "start": start,
                "end": start + timedelta(hours=1),
                "category": "compute",
                "cost": Decimal(cost),
                "gpu_hours": Decimal(gpu_hours),
            },
        )


def add_event(conn: Connection, time: datetime, event: str, step: int, gpus: int | None = None) -> None:
    conn.execute(
        "insert into run_events (source_name, training_run, event_time, event, step, gpus, origin) "
        "values ('events', 'llm-p', $time, $event, $step, $gpus, 'test')",
        {"time": time, "event": event, "step": step, "gpus": gpus},
    )


def night(conn: Connection) -> list[tuple]:
    with transaction(conn):
        build_provisional_spend(conn)
    return conn.execute(
        "select status, billed_through, estimated_through, gpu_hours, rate, estimated_cost, billed_cost, error, "
        "error_pct from provisional_spend order by billed_through"
    ).fetchall()


@pytest.fixture
def warehouse(tmp_path: Path) -> Connection:
    """llm-p billed through October 3 00:00 (24 hours of 10 GPU-hours at 25: 2.5 per GPU-hour), a
    month-long storage line beside, and its events going on to October 3 12:00: down 06:00-08:00."""
    conn = duckdb.connect(str(tmp_path / "warehouse.duckdb"))
    create_schema(conn)
    bill_hours(conn, datetime(2026, 10, 2), 24, "25")
    conn.execute(
        INSERT_ALLOCATION,
        {
            "key": "storage-month",
            "start": datetime(2026, 10, 1),
            "end": datetime(2026, 11, 1),
            "category": "storage",
            "cost": Decimal(50),
            "gpu_hours": Decimal(0),
        },
    )
    add_event(conn, datetime(2026, 10, 2), "start", 0, gpus=10)
    add_event(conn, datetime(2026, 10, 3, 6), "failure", 300)
    add_event(conn, datetime(2026, 10, 3, 8), "resume", 280, gpus=10)
    add_event(conn, datetime(2026, 10, 3, 12), "checkpoint", 400)
    return conn


def test_spend_since_the_newest_billed_hour_is_provisional_then_replaced_by_the_bill(warehouse: Connection) -> None:
    # 6 + 4 hours of training after October 3 00:00 on 10 GPUs: 100 GPU-hours at 2.5
    assert night(warehouse) == [
        (
            "provisional",
            datetime(2026, 10, 3),
            datetime(2026, 10, 3, 12),
            Decimal(100),
            Decimal("2.5"),
            Decimal(250),
            None,
            None,
            None,
        )
    ]

    # the next night the bill covers October 3 00:00-12:00 at 27 an hour (324), and the run goes on
    bill_hours(warehouse, datetime(2026, 10, 3), 12, "27")
    add_event(warehouse, datetime(2026, 10, 3, 18), "checkpoint", 600)
    settled = [
        (
            "billed",
            datetime(2026, 10, 3),
            datetime(2026, 10, 3, 12),
            Decimal(100),
            Decimal("2.5"),
            Decimal(250),
            Decimal(324),
            Decimal(-74),
            Decimal("-22.8395061728"),  # -74 / 324
        ),
        # 6 hours on 10 GPUs at (600 + 324) / (240 + 120) GPU-hours: 60 x 924 / 360 = 154
        (
            "provisional",
            datetime(2026, 10, 3, 12),
            datetime(2026, 10, 3, 18),
            Decimal(60),
            Decimal("2.5666666667"),
            Decimal(154),
            None,
            None,
            None,
        ),
    ]
    assert night(warehouse) == settled
    assert night(warehouse) == settled  # a night with nothing new changes nothing

    summary = warehouse.execute(read_sql("marts/provisional_spend", "summary")).fetchall()
    assert [row[:2] for row in summary] == [("llm-p", "provisional"), ("llm-p", "billed")]


def test_a_run_whose_events_stop_before_its_newest_billed_hour_has_nothing_provisional(
    warehouse: Connection,
) -> None:
    bill_hours(warehouse, datetime(2026, 10, 3), 13, "25")

    assert night(warehouse) == []


def test_the_run_report_marks_the_estimate_provisional_and_states_the_last_error(warehouse: Connection) -> None:
    night(warehouse)
    bill_hours(warehouse, datetime(2026, 10, 3), 12, "27")
    add_event(warehouse, datetime(2026, 10, 3, 18), "checkpoint", 600)
    night(warehouse)
    rows = fetch_rows(warehouse, read_sql("reports/run_provisional"), {"training_runs": ["llm-p"]})

    provisional, settled = provisional_paragraphs(
        [ProvisionalSpend(**{key: value for key, value in row.items() if key != "training_run"}) for row in rows]
    )

    assert provisional.tone == "warning"
    assert provisional.text.startswith(
        "Provisional, not billed yet: about 154.00 USD for 60.0 GPU-hours trained from the newest billed hour "
        "(2026-10-03 12:00 UTC) to the latest event (2026-10-03 18:00 UTC)"
    )
    assert settled.text == (
        "The latest estimate the bill has replaced (2026-10-03 00:00 UTC to 2026-10-03 12:00 UTC): estimated 250.00, "
        "billed 324.00, off by -74.00 (-22.84 %)."
    )
