"""Recommendations on hand-built tables: the checkpoint write time from the budget when the events
carry none, and each recommendation left out, with its reason, when an input is missing."""

from __future__ import annotations

from datetime import datetime, timedelta
from decimal import Decimal, localcontext

import duckdb
import pytest

from pipelines.recommendations.tables import build_recommendations
from pipelines.warehouse.connection import transaction
from pipelines.waste.settings import Waste
from tests.support.lake import memory_warehouse

START = datetime(2026, 10, 5)
NO_WRITE_TIME = (
    "no checkpoint write time: add duration_seconds to checkpoint events or checkpoint_write_seconds to the budget"
)


def _run(
    conn: duckdb.DuckDBPyConnection, run: str, *, failures: int, write_seconds: int | None, duration: int | None = None
) -> None:
    """A run of 8 GPUs training 40 hours with a checkpoint every 4 hours and `failures` failures
    (each resumed at once), 400 compute GPU-hours for 1,000 on demand, and a budget giving
    `write_seconds` (None: no key)."""
    events = [(START, "start", 8, None)]
    events += [(START + timedelta(hours=4 * n), "checkpoint", None, duration) for n in range(1, 11)]
    for n in range(failures):
        failed = START + timedelta(hours=10 * n + 5)
        events += [(failed, "failure", None, None), (failed, "resume", 8, None)]
    events.append((START + timedelta(hours=40), "end", None, None))
    conn.executemany(
        "insert into run_events (source_name, training_run, event_time, event, step, gpus, origin, duration_seconds) "
        "values ('events', $1, $2, $3, 0, $4, 'test', $5)",
        [(run, *event) for event in events],
    )
    conn.execute(
        "insert into run_costs (training_run, cost_category, currency, effective_cost, gpu_hours) "
        "values ($1, 'compute', 'USD', 1000, 400)",
        [run],
    )
    conn.execute("insert into run_progress (training_run, currency, productive_hours) values ($1, 'USD', 40)", [run])
    conn.execute(
        "insert into run_pricing (training_run, pricing, currency, gpu_hours, effective_cost, resources) "
        "values ($1, 'on_demand', 'USD', 400, 1000, 1)",
        [run],
    )
    conn.execute(
        'insert into budget_baselines (training_run, cost_category, currency, estimated_cost, thresholds, "window", '
        "budget_file, checkpoint_write_seconds) values ($1, 'compute', 'USD', 900, {'warning': 0.8, 'over': 1.0}, "
        "{'start': date '2026-10-01', 'end': date '2026-11-01'}, 'b.yaml', $2)",
        [run, write_seconds],
    )


@pytest.fixture
def warehouse() -> duckdb.DuckDBPyConnection:
    conn = memory_warehouse()
    with transaction(conn):
        _run(conn, "from-budget", failures=2, write_seconds=300)
        _run(conn, "from-events", failures=2, write_seconds=300, duration=60)
        _run(conn, "no-write-time", failures=2, write_seconds=None)
        _run(conn, "no-failures", failures=0, write_seconds=300)
        build_recommendations(conn, Waste())
    return conn


def _expected_saving(write_seconds: int) -> Decimal:
    """By hand: MTBF 40 / 2 = 20 h, tau = sqrt(2 w 20), 10 checkpoints in 40 h: every 4 h; 8 GPUs
    at 1,000 / 400 = 2.5 per GPU-hour."""
    with localcontext(prec=40):
        w = Decimal(write_seconds) / 3600
        tau = (2 * w * 20).sqrt()

        def overhead(interval: Decimal) -> Decimal:
            return 40 / interval * w + 2 * interval / 2

        return (overhead(Decimal(4)) - overhead(tau)) * 8 * Decimal("2.5")


def test_the_budgets_write_time_stands_in_for_the_events_and_the_events_come_first(
    warehouse: duckdb.DuckDBPyConnection,
) -> None:
    rows = dict(
        warehouse.execute(
            "select training_run, estimated_saving from recommendations where kind = 'checkpoint_interval'"
        ).fetchall()
    )
    assert set(rows) == {"from-budget", "from-events"}
    assert abs(rows["from-budget"] - _expected_saving(300)) < Decimal("1e-7")
    assert abs(rows["from-events"] - _expected_saving(60)) < Decimal("1e-7")
    ((evidence,),) = warehouse.execute(
        "select evidence from recommendations where training_run = 'from-budget' and kind = 'checkpoint_interval'"
    ).fetchall()
    assert evidence.startswith("checkpoint write time w 300 s (the budget's checkpoint_write_seconds); 2 failures")


def test_a_recommendation_missing_an_input_is_left_out_with_its_reason(warehouse: duckdb.DuckDBPyConnection) -> None:
    left_out = warehouse.execute(
        "select training_run, kind, reason from recommendations_left_out order by all"
    ).fetchall()
    assert ("no-write-time", "checkpoint_interval", NO_WRITE_TIME) in left_out
    assert (
        "no-failures",
        "checkpoint_interval",
        "no failures: without one the mean time between failures is unknown",
    ) in left_out
    # all on demand: no committed rate to price the on-demand GPU-hours against; no telemetry
    assert {kind for run, kind, _ in left_out if run == "from-budget"} == {
        "commit_on_demand_gpus",
        "low_gpu_utilization",
    }
    assert warehouse.execute(
        "select count(*) from recommendations where training_run in ('no-write-time', 'no-failures')"
    ).fetchone() == (0,)
