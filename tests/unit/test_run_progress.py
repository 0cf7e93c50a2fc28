"""Training progress and unit economics on hand-built events and line items: the tokens trained,
wall-clock, productive and down time of a run with a failure and of one still running, its step
time, throughput, effective MFU and cost per 1e9 tokens, and its GPU-hours by pricing type; and
metrics events (step timings) changing none of it, nor waste, provisional spend or alerts."""

import json
from datetime import date, datetime
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

import duckdb
import pytest

from connectors.training.event_files import read_event_files
from pipelines.attribution.allocate import allocate_period
from pipelines.attribution.settings import DEFAULT_DIMENSIONS
from pipelines.budgets.tables import build_budget_alerts, build_budget_variance
from pipelines.plans.files import load_budgets_with_files
from pipelines.plans.tables import replace_budget_baselines
from pipelines.progress.events import replace_run_events
from pipelines.progress.progress import build_run_progress
from pipelines.progress.provisional import build_provisional_spend
from pipelines.warehouse.connection import create_schema, transaction
from pipelines.warehouse.summaries import build_summaries
from pipelines.waste.tables import WasteSettings, build_waste
from tests.support.lake import insert_line_item, memory_warehouse

PERIOD = date(2026, 10, 1)
TEN_PLACES = Decimal("0.0000000001")
# 6 x 1e9 x 3e11 FLOPs at 1000 TFLOP/s: 500 GPU-hours at peak, 1000 at MFU 0.5, 2000 of compute,
# 2100 in all: 7 per 1e9 of the 3e11 planned tokens; 256 x 2048 = 524,288 tokens per step.
BUDGET_A = """\
training_run: llm-a
currency: USD
window: {start: 2026-10-01, end: 2026-10-06}
model: {parameters: 1e9, tokens: 3e11, gpu_peak_tflops: 1000, mfu: 0.5, overhead: 0, gpus: 16, gpu_hour_price: 2,
        batch_size: 256, sequence_length: 2048}
fixed: {monitoring: 100}
thresholds: {warning: 0.8, over: 1.0}
"""
TOKENS_PER_STEP = 256 * 2048
# llm-a fails at 03:30 and resumes 45 minutes later from its 02:00 checkpoint, and ends at 10:00.
EVENTS_A = [
    {"training_run": "llm-a", "time": "2026-10-05T00:00:00Z", "event": "start", "step": 0, "gpus": 16},
    {"training_run": "llm-a", "time": "2026-10-05T02:00:00Z", "event": "checkpoint", "step": 200},
    {"training_run": "llm-a", "time": "2026-10-05T03:30:00Z", "event": "failure", "step": 350},
    {"training_run": "llm-a", "time": "2026-10-05T04:15:00Z", "event": "resume", "step": 200, "gpus": 16},
    {"training_run": "llm-a", "time": "2026-10-05T06:00:00Z", "event": "checkpoint", "step": 375},
    {"training_run": "llm-a", "time": "2026-10-05T10:00:00Z", "event": "end", "step": 775},
]
# llm-r (no budget) fails at 05:00, resumes on 8 GPUs at 06:00 and is still training at as_of,
# the end of the latest charge (10-06 08:00).
EVENTS_R = [
    {"training_run": "llm-r", "time": "2026-10-06T00:00:00Z", "event": "start", "step": 0, "gpus": 8},
    {"training_run": "llm-r", "time": "2026-10-06T04:00:00Z", "event": "checkpoint", "step": 100},
    {"training_run": "llm-r", "time": "2026-10-06T05:00:00Z", "event": "failure", "step": 125},
    {"training_run": "llm-r", "time": "2026-10-06T06:00:00Z", "event": "resume", "step": 100, "gpus": 8},
]


def exact(value: Decimal) -> Decimal:
    """Rounded to 10 places, half away from zero, as the warehouse stores it."""
    return value.quantize(TEN_PLACES, rounding=ROUND_HALF_UP)


def add_line(
    conn: duckdb.DuckDBPyConnection,
    key: str,
    run: str,
    category: str,
    start: datetime,
    end: datetime,
    effective: str,
    gpu_hours: str = "0",
    pricing_category: str | None = None,
    commitment_type: str | None = None,
) -> None:
    insert_line_item(
        conn,
        run,
        x_LineItemKey=key,
        ChargePeriodStart=start,
        ChargePeriodEnd=end,
        ResourceId=f"i-{key}",
        BilledCost=Decimal(effective),
        EffectiveCost=Decimal(effective),
        PricingCategory=pricing_category,
        CommitmentDiscountType=commitment_type,
        x_CostCategory=category,
        x_GpuHours=Decimal(gpu_hours),
    )


@pytest.fixture
def warehouse(tmp_path: Path) -> duckdb.DuckDBPyConnection:
    conn = memory_warehouse()
    budgets = tmp_path / "budgets"
    budgets.mkdir()
    (budgets / "llm-a.yaml").write_text(BUDGET_A)
    with transaction(conn):
        replace_budget_baselines(conn, load_budgets_with_files(budgets))
    # llm-a: 144 GPU-hours under a Savings Plan at 1.875, 48 on demand at 2.75, and monitoring
    add_line(conn, "a1", "llm-a", "compute", datetime(2026, 10, 5), datetime(2026, 10, 5, 12), "270", "144",
             "Committed", "Savings Plan")  # fmt: skip
    add_line(conn, "a2", "llm-a", "compute", datetime(2026, 10, 5), datetime(2026, 10, 5, 12), "132", "48",
             "Standard")  # fmt: skip
    add_line(conn, "a3", "llm-a", "monitoring", datetime(2026, 10, 5), datetime(2026, 10, 5, 12), "8")
    # llm-r: 64 GPU-hours of spot capacity until 10-06 08:00
    add_line(conn, "r1", "llm-r", "compute", datetime(2026, 10, 6), datetime(2026, 10, 6, 8), "96", "64", "Dynamic")
    allocate_period(conn, PERIOD, DEFAULT_DIMENSIONS)
    events = tmp_path / "events.jsonl"
    events.write_text("".join(json.dumps(event) + "\n" for event in EVENTS_A + EVENTS_R))
    replace_run_events(conn, {"events": read_event_files(events)})
    with transaction(conn):
        build_run_progress(conn)
    yield conn
    conn.close()


def progress(conn: duckdb.DuckDBPyConnection, run: str) -> dict:
    cursor = conn.execute("select * from run_progress where training_run = $run", {"run": run})
    columns = [column[0] for column in cursor.description]
    (row,) = cursor.fetchall()
    return dict(zip(columns, row, strict=True))


def test_a_failure_and_its_resume_split_the_wall_clock(warehouse: duckdb.DuckDBPyConnection) -> None:
    row = progress(warehouse, "llm-a")
    # 00:00 → 10:00, down from the 03:30 failure to the 04:15 resume
    assert (row["wall_clock_hours"], row["downtime_hours"], row["productive_hours"]) == (
        Decimal(10),
        Decimal("0.75"),
        Decimal("9.25"),
    )
    # steps advanced while training: 200 + 150 (to the failure) + 175 + 400 = 925 in 33,300 s
    assert row["step_time_seconds"] == Decimal(36)
    assert row["tokens_per_gpu_second"] == exact(Decimal(TOKENS_PER_STEP * 925) / (33_300 * 16))
    # the last step, 775, of 524,288 tokens
    assert row["tokens_trained"] == 775 * TOKENS_PER_STEP == 406_323_200
    # 500 GPU-hours at peak for the planned 3e11 tokens, scaled to those trained, over 192 billed
    fraction = exact(Decimal(406_323_200) / Decimal("3e11"))
    assert row["effective_mfu"] == exact(exact(500 * fraction) / 192)
    assert abs(row["effective_mfu"] - Decimal(500) * 406_323_200 / Decimal("3e11") / 192) < Decimal("1e-9")
    assert row["gpu_hours"] == Decimal(192) and row["effective_cost"] == Decimal(410)
    assert row["cost_per_1e9_tokens"] == exact(Decimal(410) / Decimal("0.4063232"))
    assert row["estimated_cost_per_1e9_tokens"] == Decimal(7)
    assert row["currency"] == "USD"


def test_a_running_run_counts_to_as_of(warehouse: duckdb.DuckDBPyConnection) -> None:
    row = progress(warehouse, "llm-r")
    assert row["as_of"] == datetime(2026, 10, 6, 8)
    # 00:00 → as_of 08:00, down 05:00 → 06:00, training since the resume
    assert (row["wall_clock_hours"], row["downtime_hours"], row["productive_hours"]) == (
        Decimal(8),
        Decimal(1),
        Decimal(7),
    )
    # the step/time pairs end at the last event: 125 steps in 5 hours
    assert row["step_time_seconds"] == Decimal(144)
    # no budget: no tokens per step, so no tokens, throughput, MFU or cost per token
    assert [
        row[key] for key in ("tokens_trained", "tokens_per_gpu_second", "effective_mfu", "cost_per_1e9_tokens")
    ] == [None] * 4
    assert row["estimated_cost_per_1e9_tokens"] is None


def test_the_planned_tokens_give_budget_variance_s_effective_mfu(warehouse: duckdb.DuckDBPyConnection) -> None:
    with transaction(warehouse):
        build_budget_variance(warehouse)
    ((estimated, actual),) = warehouse.execute(
        "select estimated_effective_mfu, actual_effective_mfu from budget_variance "
        "where training_run = 'llm-a' and cost_category = 'compute'"
    ).fetchall()
    # the window ended 10-06: 500 at-peak GPU-hours over 1000 planned and over 192 billed
    assert (estimated, actual) == (Decimal("0.5"), exact(Decimal(500) / 192))


def test_gpu_hours_by_pricing_type(warehouse: duckdb.DuckDBPyConnection) -> None:
    rows = warehouse.execute(
        "select training_run, pricing, gpu_hours, effective_cost, cost_per_gpu_hour, gpu_hours_share "
        "from run_pricing order by all"
    ).fetchall()
    assert rows == [
        ("llm-a", "on_demand", Decimal(48), Decimal(132), Decimal("2.75"), Decimal("0.25")),
        ("llm-a", "savings_plan", Decimal(144), Decimal(270), Decimal("1.875"), Decimal("0.75")),
        ("llm-r", "spot", Decimal(64), Decimal(96), Decimal("1.5"), Decimal(1)),
    ]


def test_the_events_own_token_count_comes_first(warehouse: duckdb.DuckDBPyConnection, tmp_path: Path) -> None:
    counted = [dict(event) for event in EVENTS_A]
    counted[4]["tokens"] = 190_000_000  # the 06:00 checkpoint's count; the end gives none
    events = tmp_path / "counted.jsonl"
    events.write_text("".join(json.dumps(event) + "\n" for event in counted + EVENTS_R))
    replace_run_events(warehouse, {"events": read_event_files(events)})
    with transaction(warehouse):
        build_run_progress(warehouse)
    row = progress(warehouse, "llm-a")
    assert row["tokens_trained"] == 190_000_000
    assert row["cost_per_1e9_tokens"] == exact(Decimal(410) / Decimal("0.19"))


def test_a_checkpoint_at_the_moment_of_the_end_keeps_the_run_ended(
    warehouse: duckdb.DuckDBPyConnection, tmp_path: Path
) -> None:
    ending = [*EVENTS_A, {"training_run": "llm-a", "time": "2026-10-05T10:00:00Z", "event": "checkpoint", "step": 775}]
    events = tmp_path / "ending.jsonl"
    events.write_text("".join(json.dumps(event) + "\n" for event in reversed(ending)))
    replace_run_events(warehouse, {"events": read_event_files(events)})
    with transaction(warehouse):
        build_run_progress(warehouse)
    row = progress(warehouse, "llm-a")
    assert (row["wall_clock_hours"], row["downtime_hours"], row["step_time_seconds"]) == (
        Decimal(10),
        Decimal("0.75"),
        Decimal(36),
    )


# step timings logged between the events, at an end, days after it and past as_of
METRICS = [
    {"training_run": "llm-a", "time": "2026-10-05T01:00:00Z", "event": "metrics", "step": 100,
     "step_seconds": 3500.1, "data_wait_seconds": 400},
    {"training_run": "llm-a", "time": "2026-10-05T10:00:00Z", "event": "metrics", "step": 775,
     "step_seconds": 14000, "data_wait_seconds": 0.0000000001},
    {"training_run": "llm-a", "time": "2026-10-08T12:00:00Z", "event": "metrics", "step": 900, "tokens": 9,
     "step_seconds": 60, "data_wait_seconds": 60},
    {"training_run": "llm-r", "time": "2026-10-06T07:00:00Z", "event": "metrics", "step": 150,
     "step_seconds": 3000, "data_wait_seconds": 1200.5},
    {"training_run": "llm-r", "time": "2026-10-06T09:00:00Z", "event": "metrics", "step": 200,
     "step_seconds": 3600, "data_wait_seconds": 0},
]  # fmt: skip


def figures(conn: duckdb.DuckDBPyConnection, events: list[dict], path: Path) -> dict[str, list[tuple]]:
    """Every table built from the events, rebuilt from these events."""
    path.write_text("".join(json.dumps(event) + "\n" for event in events))
    replace_run_events(conn, {"events": read_event_files(path)})
    with transaction(conn):
        build_run_progress(conn)
        build_budget_variance(conn)
        build_provisional_spend(conn)
        build_waste(conn, WasteSettings())
        build_budget_alerts(conn)
    return {
        table: conn.execute(f"select * from {table} order by all").fetchall()
        for table in ("run_progress", "budget_variance", "provisional_spend", "waste", "budget_alerts")
    }


def test_metrics_events_change_no_progress_waste_or_wall_clock(
    warehouse: duckdb.DuckDBPyConnection, tmp_path: Path
) -> None:
    build_summaries(warehouse)
    without = figures(warehouse, EVENTS_A + EVENTS_R, tmp_path / "without.jsonl")
    with_metrics = figures(warehouse, EVENTS_A + METRICS + EVENTS_R, tmp_path / "with.jsonl")
    assert with_metrics == without
    assert without["run_progress"] and without["budget_variance"] and without["waste"]
    assert (progress(warehouse, "llm-a")["wall_clock_hours"], progress(warehouse, "llm-r")["as_of"]) == (
        Decimal(10),
        datetime(2026, 10, 6, 8),
    )
    # the timings are kept exactly as written
    assert warehouse.execute(
        "select training_run, step, step_seconds, data_wait_seconds from run_events "
        "where event = 'metrics' order by event_time"
    ).fetchall() == [
        ("llm-a", 100, Decimal("3500.1"), Decimal(400)),
        ("llm-a", 775, Decimal(14000), Decimal("1e-10")),
        ("llm-r", 150, Decimal(3000), Decimal("1200.5")),
        ("llm-r", 200, Decimal(3600), Decimal(0)),
        ("llm-a", 900, Decimal(60), Decimal(60)),
    ]


def test_a_warehouse_from_before_the_timings_keeps_its_events_and_gains_the_columns() -> None:
    conn = duckdb.connect(":memory:", config={"python_enable_replacements": False})
    conn.execute(
        "create table run_events (source_name varchar not null, training_run varchar not null, "
        "event_time timestamp not null, event varchar not null, step bigint not null, gpus integer, "
        "config_hash varchar, origin varchar not null)"
    )
    conn.execute("insert into run_events values ('log', 'llm-a', '2026-10-05 00:00', 'start', 0, 16, null, 'a:1')")
    create_schema(conn)
    assert conn.execute(
        "select training_run, event, tokens, step_seconds, data_wait_seconds from run_events"
    ).fetchall() == [("llm-a", "start", None, None, None)]
    assert conn.execute(
        "select data_type from duckdb_columns() where table_name = 'run_events' and column_name = 'step_seconds'"
    ).fetchall() == [("DECIMAL(38,10)",)]
    conn.close()
