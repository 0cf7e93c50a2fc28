"""The waste analysis on hand-built line items and event logs, in a real DuckDB file:
exact amounts per kind, computed here from the inputs, and waste never above attributed cost."""

import json
from datetime import date, datetime
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

import duckdb
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from connectors.training.event_files import RunEventsError, read_event_files
from pipelines.attribution.allocate import ALLOCATIONS_STEP, allocate_period
from pipelines.attribution.registry import RegisteredRun, replace_run_registry
from pipelines.attribution.settings import DEFAULT_DIMENSIONS
from pipelines.orchestration.partitions import partition_key
from pipelines.plans.files import load_budgets_with_files
from pipelines.plans.tables import replace_budget_baselines
from pipelines.progress.events import replace_run_events
from pipelines.warehouse.connection import transaction
from pipelines.warehouse.step_inputs import StepInputs
from pipelines.warehouse.summaries import build_summaries
from pipelines.waste.assets import WASTE
from pipelines.waste.settings import Waste
from pipelines.waste.tables import WasteSettings, build_waste
from tests.support.lake import insert_line_item, memory_warehouse

PERIOD = date(2026, 10, 1)
TEN_PLACES = Decimal("0.0000000001")
INTER_REGION = "$0.02 per GB - US East (Northern Virginia) data transfer to US West (Oregon)"
INTERNET_EGRESS = "$0.09 per GB - first 10 TB / month data transfer out beyond the global free tier"
# llm-a: checkpoints_retained 2 and a monitoring estimate of 100 (the model only makes `storage` valid).
BUDGET_A = """\
training_run: llm-a
currency: USD
window: {start: 2026-10-01, end: 2026-11-01}
model: {parameters: 1e9, tokens: 3e11, gpu_peak_tflops: 1000, mfu: 0.5, overhead: 0, gpus: 16, gpu_hour_price: 2}
storage: {checkpoint_gb: 10, checkpoints_retained: 2, dataset_gb: 0, price_gb_month: 0.02}
fixed: {monitoring: 100}
thresholds: {warning: 0.8, over: 1.0}
"""
# llm-a crashes twice: at 03:30 (last checkpoint 02:00, 16 GPUs) and at 05:00 (resumed at 04:00
# from the 02:00 checkpoint on 8 GPUs), writes four checkpoints and ends at 10:00.
EVENTS_A = [
    {
        "training_run": "llm-a",
        "time": "2026-10-05T00:00:00Z",
        "event": "start",
        "step": 0,
        "gpus": 16,
        "config_hash": "h1",
    },
    {"training_run": "llm-a", "time": "2026-10-05T02:00:00Z", "event": "checkpoint", "step": 200},
    {"training_run": "llm-a", "time": "2026-10-05T03:30:00Z", "event": "failure", "step": 350},
    {"training_run": "llm-a", "time": "2026-10-05T04:00:00Z", "event": "resume", "step": 200, "gpus": 8},
    {"training_run": "llm-a", "time": "2026-10-05T05:00:00Z", "event": "failure", "step": 300},
    {"training_run": "llm-a", "time": "2026-10-05T05:30:00Z", "event": "resume", "step": 200, "gpus": 8},
    {"training_run": "llm-a", "time": "2026-10-05T06:00:00Z", "event": "checkpoint", "step": 250},
    {"training_run": "llm-a", "time": "2026-10-05T08:00:00Z", "event": "checkpoint", "step": 450},
    {"training_run": "llm-a", "time": "2026-10-05T09:00:00+00:00", "event": "checkpoint", "step": 550},
    {"training_run": "llm-a", "time": "2026-10-05T10:00:00Z", "event": "end", "step": 650},
]
# llm-b repeats llm-a's experiment, dataset and configuration two days later.
EVENTS_B = [
    {
        "training_run": "llm-b",
        "time": "2026-10-07T00:00:00Z",
        "event": "start",
        "step": 0,
        "gpus": 16,
        "config_hash": "h1",
    },
    {"training_run": "llm-b", "time": "2026-10-07T01:00:00Z", "event": "failure", "step": 80},
    {"training_run": "llm-b", "time": "2026-10-07T03:00:00Z", "event": "end", "step": 200},
]


def hours(day: int, hour: int) -> datetime:
    return datetime(2026, 10, day, hour)


def add_line(
    conn: duckdb.DuckDBPyConnection,
    key: str,
    run: str,
    category: str,
    resource: str | None,
    start: datetime,
    end: datetime,
    effective: str,
    gpu_hours: str = "0",
    description: str | None = None,
    charge_category: str = "Usage",
) -> None:
    insert_line_item(
        conn,
        run,
        x_LineItemKey=key,
        ChargePeriodStart=start,
        ChargePeriodEnd=end,
        ChargeCategory=charge_category,
        ChargeDescription=description,
        ResourceId=resource,
        BilledCost=Decimal(effective),
        EffectiveCost=Decimal(effective),
        x_CostCategory=category,
        x_GpuHours=Decimal(gpu_hours),
    )


def write_events(path: Path, *logs: list[dict]) -> Path:
    path.write_text("".join(json.dumps(event) + "\n" for log in logs for event in log))
    return path


@pytest.fixture
def warehouse(tmp_path: Path) -> duckdb.DuckDBPyConnection:
    """llm-a with every kind but duplicates, llm-b repeating it, llm-c idle after its registry
    window with a credit that leaves less attributed cost than its idle spend."""
    conn = memory_warehouse()
    budgets = tmp_path / "budgets"
    budgets.mkdir()
    (budgets / "llm-a.yaml").write_text(BUDGET_A)
    with transaction(conn):
        replace_run_registry(
            conn,
            [
                RegisteredRun(id="llm-a", experiment="exp-a", dataset_version="ds-1", owner="alice"),
                RegisteredRun(id="llm-b", experiment="exp-a", dataset_version="ds-1", owner="bob"),
                RegisteredRun(
                    id="llm-c",
                    experiment="exp-a",
                    dataset_version="ds-1",
                    owner="carol",
                    start=hours(7, 0),
                    end=hours(8, 0),
                ),
            ],
        )
        replace_budget_baselines(conn, load_budgets_with_files(budgets))
    # llm-a
    add_line(conn, "a-gpu", "llm-a", "compute", "i-a", hours(5, 0), hours(5, 12), "360", gpu_hours="192")
    add_line(conn, "a-volume", "llm-a", "storage", "vol-a", hours(5, 0), hours(6, 0), "4.9")
    add_line(conn, "a-ckpt-1", "llm-a", "storage", "s3-ckpt-a", hours(5, 0), hours(6, 0), "2.0")
    add_line(conn, "a-ckpt-2", "llm-a", "storage", "s3-ckpt-a", hours(6, 0), hours(7, 0), "2.4")
    add_line(conn, "a-xfer-1", "llm-a", "network", "i-a", hours(5, 6), hours(5, 7), "3.0", description=INTER_REGION)
    add_line(conn, "a-xfer-2", "llm-a", "network", "i-a", hours(5, 9), hours(5, 11), "4.0", description=INTER_REGION)
    add_line(conn, "a-egress", "llm-a", "network", "i-a", hours(5, 6), hours(5, 7), "1.0", description=INTERNET_EGRESS)
    add_line(conn, "a-logs", "llm-a", "monitoring", "log-group-a", hours(5, 0), hours(5, 10), "130")
    add_line(conn, "a-logs-late", "llm-a", "monitoring", "log-group-a", hours(5, 10), hours(5, 12), "6")
    # llm-b
    add_line(conn, "b-gpu", "llm-b", "compute", "i-b", hours(7, 0), hours(7, 4), "80", gpu_hours="64")
    add_line(conn, "b-volume", "llm-b", "storage", "vol-b", hours(7, 0), hours(8, 0), "10")
    # llm-c: no events, registry window ends 10-08 00:00
    add_line(conn, "c-gpu", "llm-c", "compute", "i-c", hours(7, 20), hours(8, 4), "16", gpu_hours="8")
    add_line(conn, "c-credit", "llm-c", "compute", None, hours(7, 0), hours(8, 0), "-10", charge_category="Credit")
    allocate_period(conn, PERIOD, DEFAULT_DIMENSIONS)
    build_summaries(conn)
    replace_run_events(conn, {"events": read_event_files(write_events(tmp_path / "events.jsonl", EVENTS_A, EVENTS_B))})
    yield conn
    conn.close()


def exact(value: Decimal) -> Decimal:
    """Rounded to 10 places, half away from zero, as the warehouse stores money."""
    return value.quantize(TEN_PLACES, rounding=ROUND_HALF_UP)


def waste_rows(conn: duckdb.DuckDBPyConnection) -> dict[tuple[str, str, str], tuple[Decimal, Decimal]]:
    rows = conn.execute(
        "select training_run, kind, cost_category, detail, effective_cost, gpu_hours from waste"
    ).fetchall()
    totals: dict[tuple[str, str, str], tuple[Decimal, Decimal]] = {}
    for run, kind, category, _, cost, gpu_hours in rows:
        previous_cost, previous_hours = totals.get((run, kind, category), (Decimal(0), Decimal(0)))
        totals[(run, kind, category)] = (previous_cost + cost, previous_hours + gpu_hours)
    return totals


def test_each_kind_of_waste_is_exact(warehouse: duckdb.DuckDBPyConnection) -> None:
    with transaction(warehouse):
        build_waste(warehouse, WasteSettings())
    rows = waste_rows(warehouse)

    # llm-a's compute rate: 360 / 192 GPU-hours. Failure 1: 02:00 → 03:30 on 16 GPUs = 24 GPU-hours;
    # failure 2: from the 04:00 resume (later than the 02:00 checkpoint) → 05:00 on 8 GPUs = 8.
    rate = Decimal(360) / Decimal(192)
    assert rows[("llm-a", "recompute_after_failure", "compute")] == (exact(24 * rate + 8 * rate), Decimal(32))
    # ended 10:00: 2 of the 12 hours of i-a, 14 of vol-a's 24, 2 of 11:00's transfer line, the late logs
    assert rows[("llm-a", "idle_after_run", "compute")] == (exact(Decimal(360) * 2 / 12), exact(Decimal(192) * 2 / 12))
    assert rows[("llm-a", "idle_after_run", "storage")] == (exact(Decimal("4.9") * 14 / 24), Decimal(0))
    assert rows[("llm-a", "idle_after_run", "network")] == (exact(Decimal("4.0") * 1 / 2), Decimal(0))
    assert rows[("llm-a", "idle_after_run", "monitoring")] == (Decimal(6), Decimal(0))
    # four checkpoints written by each line's end, two retained: half of each checkpoint line
    assert rows[("llm-a", "checkpoint_retention", "storage")] == (Decimal("2.0") * 2 / 4 + Decimal("2.4") * 2 / 4, 0)
    # inter-region lines before the end (the internet egress line is not inter-region)
    assert rows[("llm-a", "cross_region_transfer", "network")] == (Decimal("3.0") + Decimal("4.0") / 2, 0)
    # monitoring before the end: 130 against an estimate of 100
    assert rows[("llm-a", "monitoring_growth", "monitoring")] == (Decimal(30), 0)
    # llm-b repeats llm-a (same experiment, dataset and config hash): its whole cost, nothing else
    assert {key: value for key, value in rows.items() if key[0] == "llm-b"} == {
        ("llm-b", "duplicate_experiment", "compute"): (Decimal(80), Decimal(64)),
        ("llm-b", "duplicate_experiment", "storage"): (Decimal(10), Decimal(0)),
    }
    # llm-c idles 4 of its 8 hours after its registry window (8, 4 GPU-hours), but a credit leaves
    # it 16 - 10 = 6: the item is capped to 6 and keeps 6/8 of its GPU-hours
    assert rows[("llm-c", "idle_after_run", "compute")] == (Decimal(6), Decimal(3))
    assert {key[0] for key in rows} == {"llm-a", "llm-b", "llm-c"}


def test_waste_changes_no_attributed_table_and_the_rebuild_is_stable(warehouse: duckdb.DuckDBPyConnection) -> None:
    read = ("cost_allocations", "run_costs", "focus_line_items", "budget_baselines", "run_registry", "run_events")

    def contents() -> dict[str, list[tuple]]:
        return {name: warehouse.execute(f"select * from {name} order by all").fetchall() for name in read}

    before = contents()
    with transaction(warehouse):
        build_waste(warehouse, WasteSettings())
    first = warehouse.execute("select * from waste order by all").fetchall()
    with transaction(warehouse):
        build_waste(warehouse, WasteSettings())
    assert contents() == before
    assert warehouse.execute("select * from waste order by all").fetchall() == first


def test_waste_settings_choose_the_checkpoint_and_transfer_lines(warehouse: duckdb.DuckDBPyConnection) -> None:
    with transaction(warehouse):
        build_waste(
            warehouse,
            WasteSettings(Waste(checkpoint_resources=["VOL-*"], inter_region_transfer=["*beyond the global*"])),
        )
    rows = waste_rows(warehouse)
    # vol-a is now the checkpoint storage (so not idle), s3-ckpt-a ordinary storage idle after 10:00
    assert rows[("llm-a", "checkpoint_retention", "storage")] == (Decimal("4.9") * 2 / 4, 0)
    assert rows[("llm-a", "idle_after_run", "storage")] == (exact(Decimal("2.0") * 14 / 24) + Decimal("2.4"), 0)
    assert rows[("llm-a", "cross_region_transfer", "network")] == (Decimal("1.0"), 0)


def test_registered_storage_kept_after_the_window_is_checkpoint_retention(
    warehouse: duckdb.DuckDBPyConnection,
) -> None:
    with transaction(warehouse):
        replace_run_registry(
            warehouse,
            [RegisteredRun(id="llm-a", start=hours(5, 0), end=hours(6, 0), resources=["models-a"])],
        )
    # an untagged bucket the registry names, charged a day after llm-a's window: no checkpoint glob
    add_line(warehouse, "a-kept", None, "storage", "models-a", hours(6, 0), hours(7, 0), "4.0")
    allocate_period(warehouse, PERIOD, DEFAULT_DIMENSIONS)
    build_summaries(warehouse)
    with transaction(warehouse):
        build_waste(warehouse, WasteSettings())
    kept = warehouse.execute(
        "select kind, effective_cost, detail from waste where detail like 'resource models-a%'"
    ).fetchall()
    # four checkpoints written by its charge end, two retained: half of it, and no idle item
    assert kept == [
        ("checkpoint_retention", Decimal(2), "resource models-a: up to 4 checkpoints stored, 2 retained in the budget")
    ]


def test_a_run_still_running_has_no_idle_waste(warehouse: duckdb.DuckDBPyConnection, tmp_path: Path) -> None:
    without_end = [event for event in EVENTS_A if event["event"] != "end"]
    replace_run_events(warehouse, {"events": read_event_files(write_events(tmp_path / "running.jsonl", without_end))})
    with transaction(warehouse):
        build_waste(warehouse, WasteSettings())
    kinds = {key[1] for key in waste_rows(warehouse) if key[0] == "llm-a"}
    assert kinds == {"recompute_after_failure", "checkpoint_retention", "cross_region_transfer", "monitoring_growth"}
    # monitoring growth now counts every log line: 136 against 100
    assert waste_rows(warehouse)[("llm-a", "monitoring_growth", "monitoring")] == (Decimal(36), 0)


def test_waste_is_rebuilt_only_when_its_inputs_change(warehouse: duckdb.DuckDBPyConnection, tmp_path: Path) -> None:
    def build(settings: WasteSettings) -> bool:
        with transaction(warehouse):
            return WASTE.build_if_changed(warehouse, settings)

    with transaction(warehouse):
        build_waste(warehouse, WasteSettings())
    expected = waste_rows(warehouse)
    warehouse.execute("delete from waste")
    assert build(WasteSettings()) is True and waste_rows(warehouse) == expected

    warehouse.execute("delete from waste")  # only a rebuild would bring the items back
    assert build(WasteSettings()) is False and waste_rows(warehouse) == {}

    without_end = [event for event in EVENTS_A if event["event"] != "end"]
    replace_run_events(warehouse, {"events": read_event_files(write_events(tmp_path / "running.jsonl", without_end))})
    assert build(WasteSettings()) is True
    assert ("llm-a", "recompute_after_failure", "compute") in waste_rows(warehouse)
    assert ("llm-a", "idle_after_run", "compute") not in waste_rows(warehouse)

    other_settings = WasteSettings(Waste(checkpoint_resources=["VOL-*"]))
    assert build(other_settings) is True and build(other_settings) is False
    reloaded = StepInputs(ALLOCATIONS_STEP, partition_key(PERIOD), "reloaded period")
    allocate_period(warehouse, PERIOD, DEFAULT_DIMENSIONS, inputs=reloaded)
    assert build(other_settings) is True


AMOUNTS = st.decimals(
    min_value=Decimal("-50"), max_value=Decimal("500"), places=4, allow_nan=False, allow_infinity=False
)
CATEGORIES = st.sampled_from(["compute", "storage", "network", "monitoring"])
RESOURCES = st.sampled_from(["i-x", "vol-x", "ckpt-x", None])


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    lines=st.lists(
        st.tuples(
            st.sampled_from(["llm-a", "llm-b", "llm-c"]),
            CATEGORIES,
            RESOURCES,
            st.integers(min_value=0, max_value=47),
            st.integers(min_value=0, max_value=30),
            AMOUNTS,
            st.integers(min_value=0, max_value=64),
            st.booleans(),
        ),
        min_size=1,
        max_size=25,
    )
)
def test_waste_never_exceeds_a_runs_attributed_cost(warehouse: duckdb.DuckDBPyConnection, lines: list[tuple]) -> None:
    """Random lines (credits included) added to the fixture's: per run, Σ waste ≤ attributed cost."""
    for index, (run, category, resource, start_hour, length, amount, gpu_hours, inter_region) in enumerate(lines):
        start = datetime(2026, 10, 5 + start_hour // 24, start_hour % 24)
        end = datetime(2026, 10, 5 + (start_hour + length) // 24, (start_hour + length) % 24)
        add_line(
            warehouse,
            f"random-{index}",
            run,
            category,
            resource,
            start,
            end,
            str(amount),
            gpu_hours=str(gpu_hours),
            description=INTER_REGION if inter_region else None,
        )
    allocate_period(warehouse, PERIOD, DEFAULT_DIMENSIONS)
    build_summaries(warehouse)
    with transaction(warehouse):
        build_waste(warehouse, WasteSettings())
    over = warehouse.execute(
        """
        select costs.training_run, costs.cost, coalesce(sum(waste.effective_cost), 0) as waste
        from (select training_run, sum(effective_cost) as cost from run_costs group by 1) as costs
        left join waste on waste.training_run = costs.training_run
        group by costs.training_run, costs.cost
        having coalesce(sum(waste.effective_cost), 0) > greatest(costs.cost, 0)
        """
    ).fetchall()
    assert over == []
    assert warehouse.execute("select count(*) from waste where effective_cost <= 0").fetchone() == (0,)
    warehouse.execute("delete from focus_line_items where x_LineItemKey like 'random-%'")


# a line's start, its event and step timings to follow
TIMED = '{"training_run": "r", "time": "2026-10-05T01:00:00Z", "step": 9, '


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (
            '{"training_run": "r", "time": "2026-10-05T00:00:00", "event": "start", "step": 0}',
            "time: '2026-10-05T00:00:00' has no UTC offset",
        ),
        (
            '{"training_run": "r", "time": "2026-10-05T00:00:00Z", "event": "crash", "step": 0}',
            "event: 'crash' is not one of",
        ),
        (
            '{"training_run": "r", "time": "2026-10-05T00:00:00Z", "event": "start", "step": -1}',
            "step: must be an integer ≥ 0",
        ),
        (
            '{"training_run": "r", "time": "2026-10-05T00:00:00Z", "event": "start", "step": 1.5}',
            "step: must be an integer ≥ 0",
        ),
        (
            '{"training_run": "r", "time": "2026-10-05T00:00:00Z", "event": "start", "step": 0, "gpus": 0}',
            "gpus: must be an integer ≥ 1",
        ),
        (
            '{"training_run": "r", "time": "2026-10-05T00:00:00Z", "event": "end", "step": 9, "tokens": "9e9"}',
            "tokens: must be an integer ≥ 0",
        ),
        (
            '{"training_run": "r", "time": "2026-10-05T00:00:00Z", "event": "start", "step": 0, "gpu": 8}',
            "gpu: unknown key",
        ),
        (
            TIMED + '"event": "metrics", "step_seconds": 30, "data_wait_seconds": -3}',
            "data_wait_seconds: must be a number ≥ 0, got -3",
        ),
        (
            TIMED + '"event": "checkpoint", "step_seconds": -0.5, "data_wait_seconds": 0}',
            "step_seconds: must be a number ≥ 0, got -0.5",
        ),
        (
            TIMED + '"event": "metrics", "step_seconds": "30", "data_wait_seconds": 3}',
            "step_seconds: must be a number ≥ 0, got '30'",
        ),
        (
            TIMED + '"event": "metrics", "step_seconds": NaN, "data_wait_seconds": 3}',
            "step_seconds: must be a number ≥ 0, got nan",
        ),
        (
            TIMED + '"event": "metrics", "step_seconds": 1e28, "data_wait_seconds": 3}',
            "step_seconds: must be below 10^28 seconds, got 1E+28",
        ),
        (
            TIMED + '"event": "metrics", "step_seconds": 30, "data_wait_seconds": 30.5}',
            "data_wait_seconds: must be at most step_seconds (30), got 30.5",
        ),
        (
            TIMED + '"event": "checkpoint", "step_seconds": 30}',
            "data_wait_seconds: missing (step_seconds and data_wait_seconds are given together)",
        ),
        (
            TIMED + '"event": "metrics"}',
            "step_seconds, data_wait_seconds: missing (a metrics event carries step_seconds and data_wait_seconds)",
        ),
        (
            TIMED + '"event": "failure", "duration_seconds": 120}',
            "duration_seconds: only a checkpoint event has a write time, not failure",
        ),
        (TIMED + '"event": "checkpoint", "duration_seconds": 0}', "duration_seconds: must be a number > 0, got 0"),
        (
            TIMED + '"event": "checkpoint", "duration_seconds": -5}',
            "duration_seconds: must be a number > 0, got -5",
        ),
        (
            '{"training_run": "", "time": "2026-10-05T00:00:00Z", "event": "start", "step": 0}',
            "training_run: must be non-empty text",
        ),
        ('{"training_run": "r", "event": "start", "step": 0}', "time: missing"),
        (
            '{"training_run": "r", "time": "yesterday", "event": "start", "step": 0}',
            "'yesterday' is not an ISO-8601 time",
        ),
        ('["r", "2026-10-05T00:00:00Z"]', "not a JSON object"),
        ('{"training_run": "r", "time": ', "not a JSON object"),
    ],
)
def test_a_bad_event_line_is_named_by_file_and_line(tmp_path: Path, line: str, message: str) -> None:
    folder = tmp_path / "events"
    folder.mkdir()
    write_events(folder / "a.jsonl", EVENTS_B)
    (folder / "b.jsonl").write_text(json.dumps(EVENTS_A[0]) + "\n\n" + line + "\n")
    with pytest.raises(RunEventsError) as error:
        read_event_files(folder)
    assert f"{folder / 'b.jsonl'}:3: " in str(error.value) and message in str(error.value)


def test_an_event_recorded_twice_names_both_lines(tmp_path: Path) -> None:
    path = write_events(tmp_path / "events.jsonl", EVENTS_B, EVENTS_B[1:2])
    with pytest.raises(
        RunEventsError, match=rf"{path}:4: failure of 'llm-b' at 2026-10-07T01:00:00Z is already recorded at {path}:2"
    ):
        read_event_files(path)


def test_events_are_read_from_a_folder_in_file_order_as_utc(tmp_path: Path) -> None:
    folder = tmp_path / "events"
    (folder / "nested").mkdir(parents=True)
    write_events(folder / "nested" / "b.ndjson", EVENTS_B)
    write_events(folder / "a.jsonl", [{**EVENTS_A[0], "time": "2026-10-05T02:00:00+02:00"}])
    (folder / "notes.txt").write_text("not events")
    events = read_event_files(folder)
    assert [(e.training_run, e.time, e.event, e.gpus, e.config_hash) for e in events[:2]] == [
        ("llm-a", datetime(2026, 10, 5, 0, 0), "start", 16, "h1"),
        ("llm-b", datetime(2026, 10, 7, 0, 0), "start", 16, "h1"),
    ]
    assert events[0].origin == f"{folder / 'a.jsonl'}:1"
