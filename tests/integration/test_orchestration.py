"""The nightly orchestration: every table an asset's statements read is an edge of the graph,
schedule ticks, the delivery sensor's cursor, blocking checks in a real in-process
materialization, and the warning checks on real deliveries."""

import json
import os
import re
import shutil
import sys
from datetime import UTC, date, datetime
from decimal import Decimal
from pathlib import Path
from zoneinfo import ZoneInfo

import dagster as dg
import duckdb
import pytest
from dagster._core.definitions.reconstruct import ReconstructableRepository

from pipelines.config import load_config
from pipelines.definitions import MAINTENANCE_JOB, NIGHTLY_JOB, build_asset_graph, build_definitions
from pipelines.demo import write_demo
from pipelines.nightly import run_nightly
from pipelines.orchestration.resources import RunLedgerResource
from pipelines.orchestration.tables import INPUTS_METADATA_KEY, tables_held
from pipelines.schedules import NIGHTLY_SCHEDULE
from pipelines.sensors import DELIVERY_SENSOR
from pipelines.warehouse import connection, sql
from pipelines.warehouse.catalog import warehouse_catalog
from pipelines.warehouse.connection import VIEWS
from tests.support import REPO
from tests.support.demo_lake import SharedDemo, copy_demo_inputs
from tests.support.lake import lake_of, reading, writing

CUR_EXPORT = Path(".runledger/demo/aws/cur2-demo")
# Upstream assets that are read from nowhere but must pass first: budgets and waste are never
# computed from numbers reconciliation found unbalanced (its blocking check stops them).
GATES = {
    "budget_variance": {"reconciliation"},
    "group_budget_variance": {"reconciliation"},
    "budget_alerts": {"reconciliation"},
    "waste": {"reconciliation"},
    "run_progress": {"reconciliation"},
    "variance_causes": {"reconciliation"},
    "provisional_spend": {"reconciliation"},
    "commitment_utilization": {"reconciliation"},
    "run_utilization": {"reconciliation"},
    "run_costs_fully_loaded": {"reconciliation"},
    "recommendations": {"reconciliation"},
}
VIEW_NAMES = {view.rsplit("/", 1)[1] for view in VIEWS}
SQL_COMMENT = re.compile(r"--[^\n]*")
SQL_STRING = re.compile(r"'(?:[^']|'')*'")
TABLE_READ = re.compile(r"(?<!delete )\b(?:from|join)\s+(\w+)", re.IGNORECASE)
GCP_EXPORT = Path(".runledger/demo/gcp")
QUIET = {"loggers": {"console": {"config": {"log_level": "CRITICAL"}}}}


@pytest.fixture
def demo_config(shared_demo: SharedDemo, tmp_path: Path) -> Path:
    """The demo project before its first night (`write_demo(tmp_path)`)."""
    return copy_demo_inputs(shared_demo, tmp_path)


def tick(defs: dg.Definitions, moment: datetime) -> list[dg.RunRequest]:
    schedule = defs.resolve_schedule_def(NIGHTLY_SCHEDULE)
    return list(schedule(dg.build_schedule_context(scheduled_execution_time=moment)))


@pytest.mark.parametrize(
    ("moment", "expected"),
    [
        (datetime(2026, 11, 30, 6, 0, tzinfo=UTC), ["2026-10-01", "2026-11-01"]),
        (datetime(2026, 1, 1, 0, 5, tzinfo=UTC), ["2025-12-01", "2026-01-01"]),
        # 23:30 on 31 October in Los Angeles is already 1 November in UTC, the billing clock.
        (datetime(2026, 10, 31, 23, 30, tzinfo=ZoneInfo("America/Los_Angeles")), ["2026-10-01", "2026-11-01"]),
        (datetime(2026, 3, 1, 0, 30, tzinfo=ZoneInfo("Europe/Berlin")), ["2026-01-01", "2026-02-01"]),
    ],
)
def test_a_tick_requests_exactly_the_current_and_previous_billing_periods(
    demo_config: Path, moment: datetime, expected: list[str]
) -> None:
    requests = tick(build_definitions(demo_config), moment)
    assert [r.partition_key for r in requests] == expected
    assert all(r.asset_selection is None for r in requests)  # the whole graph: every source, every layer


def test_the_schedule_uses_the_configured_cron_and_timezone(tmp_path: Path) -> None:
    config = write_demo(tmp_path)
    config.write_text(config.read_text() + "orchestration:\n  cron: '30 2 * * *'\n  timezone: Europe/Berlin\n")
    schedule = build_definitions(config).resolve_schedule_def(NIGHTLY_SCHEDULE)
    assert (schedule.cron_schedule, schedule.execution_timezone) == ("30 2 * * *", "Europe/Berlin")
    assert schedule.job_name == "runledger_nightly"


def sense(defs: dg.Definitions, cursor: str | None) -> tuple[list[dg.RunRequest], str | None]:
    sensor = defs.resolve_sensor_def(DELIVERY_SENSOR)
    result = sensor(dg.build_sensor_context(cursor=cursor, definitions=defs))
    return list(result.run_requests or []), result.cursor


def requested(requests: list[dg.RunRequest]) -> list[tuple[str, list[str]]]:
    """(partition, raw loads requested) per run request."""
    return [
        (r.partition_key, sorted(k.to_user_string() for k in r.asset_selection if k.path[0] == "raw")) for r in requests
    ]


def new_cur_delivery(root: Path, period: str, execution_id: str) -> None:
    """A new CUR 2.0 execution of `period`: its files copied to a new folder and the manifest
    rewritten to list them, as AWS does on a refresh."""
    manifest_path = root / CUR_EXPORT / f"metadata/BILLING_PERIOD={period}/cur2-demo-Manifest.json"
    manifest = json.loads(manifest_path.read_text())
    data = root / CUR_EXPORT / f"data/BILLING_PERIOD={period}"
    old_folder = next(p for p in data.iterdir() if manifest["executionId"] in p.name)
    new_folder = data / f"20261130T031500Z-{execution_id}"
    shutil.copytree(old_folder, new_folder)
    manifest["executionId"] = execution_id
    manifest["dataFiles"] = [uri.replace(old_folder.name, new_folder.name) for uri in manifest["dataFiles"]]
    manifest_path.write_text(json.dumps(manifest))


def late_gcp_rows(root: Path, invoice_month: str, export_time: str) -> None:
    """A new export file with a copy of one row of `invoice_month`, exported later."""
    source = next(
        line
        for file in sorted((root / GCP_EXPORT).glob("*.jsonl"))
        for line in file.read_text().splitlines()
        if f'"month":"{invoice_month}"' in line
    )
    row = json.loads(source) | {"export_time": export_time}
    (root / GCP_EXPORT / "gcp_billing_export_resource_v1_01A2B3_C4D5E6_F7A8B9_20261130.jsonl").write_text(
        json.dumps(row) + "\n"
    )


def test_the_sensor_requests_each_delivery_once(demo_config: Path) -> None:
    root = demo_config.parent
    defs = build_definitions(demo_config)

    first, cursor = sense(defs, None)
    assert requested(first) == [
        ("2026-10-01", ["raw/aws_main", "raw/gcp_main"]),
        ("2026-11-01", ["raw/aws_main", "raw/gcp_main"]),
    ]
    downstream = {k.to_user_string() for k in first[0].asset_selection if k.path[0] != "raw"}
    assert {
        "focus_line_items",
        "cost_allocations",
        "reconciliation",
        "budget_variance",
        "post_mortem_reports",
    } <= downstream

    again, same_cursor = sense(defs, cursor)
    assert again == [] and json.loads(same_cursor) == json.loads(cursor)

    new_cur_delivery(root, "2026-11", "0d5e7c1a-2b3c-4d5e-8f90-a1b2c3d4e5f6")
    after_manifest, cursor = sense(defs, cursor)
    assert requested(after_manifest) == [("2026-11-01", ["raw/aws_main"])]
    assert sense(defs, cursor)[0] == []

    late_gcp_rows(root, "202610", "2026-11-30 01:12:00.000000 UTC")
    after_late_rows, cursor = sense(defs, cursor)
    assert requested(after_late_rows) == [("2026-10-01", ["raw/gcp_main"])]
    assert sense(defs, cursor)[0] == []
    assert len({r.run_key for r in first + after_manifest + after_late_rows}) == 4


def test_the_sensor_skips_without_sources(tmp_path: Path) -> None:
    config = tmp_path / "runledger.yaml"
    config.write_text("warehouse: w.duckdb\n")
    defs = build_definitions(config)
    result = defs.resolve_sensor_def(DELIVERY_SENSOR)(dg.build_sensor_context(definitions=defs))
    assert isinstance(result, dg.SkipReason) and "no billing sources" in result.skip_message


def materialize(graph, selection, config: Path, partition: str | None = None) -> dg.ExecuteInProcessResult:
    return dg.materialize(
        graph.assets,
        selection=[key for asset in selection for key in asset.keys],
        partition_key=partition,
        resources={"runledger": RunLedgerResource(config_path=str(config))},
        run_config=QUIET,
        raise_on_error=False,
    )


def materialized(result: dg.ExecuteInProcessResult) -> set[str]:
    return {event.asset_key.to_user_string() for event in result.get_asset_materialization_events()}


TABLE_MACRO = re.compile(r"create or replace macro (\w+)\([^)]*\) as table(.*?);", re.IGNORECASE | re.DOTALL)


def tables_read(statements: list[str], own: frozenset[str] = frozenset()) -> set[str]:
    """The warehouse tables and views the statements read (from or join them, directly or through
    a table macro of sql/schema/macros.sql), not write; a view read reads its tables too, unless
    the asset holds the view itself (`own`: its previews read what it just wrote)."""
    catalog = warehouse_catalog()
    macros = {name.lower(): body for name, body in TABLE_MACRO.findall(sql.read_sql("schema/macros"))}
    views = {view.rsplit("/", 1)[1]: sql.read_sql(view, "create") for view in VIEWS}
    read = set()
    pending = list(statements)
    while pending:
        for name in TABLE_READ.findall(SQL_STRING.sub("''", SQL_COMMENT.sub("", pending.pop()))):
            if name.lower() in catalog:
                if name.lower() in views and name.lower() not in read | own:
                    pending.append(views[name.lower()])
                read.add(name.lower())
            elif name.lower() in macros:
                pending.append(macros.pop(name.lower()))
    return read


def test_every_table_an_asset_reads_is_held_by_an_upstream_asset(
    demo_config: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each asset materialized on its own, recording the statements it runs (not those creating
    the schema when it connects): every table they read is held by the asset itself or by one of
    its upstream assets, and every upstream asset holds a table it reads (or is a gate)."""
    statements: list[str] = []
    creating_schema = []

    def recording_read_sql(path: str, name: str | None = None) -> str:
        text = read_sql(path, name)
        # a step's own step_inputs record: bookkeeping of its skip, not an input
        if not creating_schema and path != "ops/step_inputs":
            statements.append(text)
        return text

    def quiet_create_schema(conn: duckdb.DuckDBPyConnection, **options: bool) -> None:
        creating_schema.append(True)
        try:
            create_schema(conn, **options)
        finally:
            creating_schema.pop()

    # the one function every schema creation runs, in a transaction of its caller's
    read_sql, create_schema = sql.read_sql, connection.create_schema_statements
    for module in [m for name, m in sys.modules.items() if name.startswith("pipelines.") and m is not sql]:
        if getattr(module, "read_sql", None) is read_sql:
            monkeypatch.setattr(module, "read_sql", recording_read_sql)
    monkeypatch.setattr(connection, "create_schema_statements", quiet_create_schema)

    graph = build_asset_graph(load_config(demo_config))
    specs = {spec.key: spec for asset in graph.assets for spec in asset.specs}
    holders = {
        table: {key for key, spec in specs.items() if table in tables_held(spec)} for table in warehouse_catalog()
    }
    upstream = {key: {dep.asset_key for dep in spec.deps} for key, spec in specs.items()}
    read_by: dict[str, set[str]] = {}
    for asset in graph.assets:
        statements.clear()
        result = materialize(graph, [asset], demo_config, "2026-11-01" if asset.partitions_def else None)
        assert result.success, asset.key
        # every writer reads schema_version and lake_owners as it connects: bookkeeping of the connection, no input
        own_tables = frozenset(table for spec in asset.specs for table in tables_held(spec))
        read_by[asset.key.to_user_string()] = tables_read(statements, own_tables) - {"schema_version", "lake_owners"}

    for key, spec in specs.items():
        name = key.to_user_string()
        own = set(tables_held(spec))
        for table in read_by[name] - own:
            assert holders[table] & upstream[key], f"{name} reads {table}, held by none of its upstream assets"
        if INPUTS_METADATA_KEY in spec.metadata:
            # a step kept while its input tables' files are the same reads no other table
            inputs = set(spec.metadata[INPUTS_METADATA_KEY].value)
            tables = read_by[name] - own - VIEW_NAMES  # a view has no files: its tables are read
            assert tables == inputs, f"{name} reads {tables}, its digest covers {inputs}"
        for parent in upstream[key]:
            parent_name = parent.to_user_string()
            assert set(tables_held(specs[parent])) & read_by[name] or parent_name in GATES.get(name, set()), (
                f"{name} depends on {parent_name} but reads none of its tables"
            )
    assert read_by["cost_allocations"] >= {"focus_line_items", "run_registry", "resource_tag_snapshots", "loads"}
    assert read_by["post_mortem_reports"] >= {"cost_allocations", "budget_baselines", "run_registry", "loads"}


def test_a_failing_reconciliation_stops_budget_variance_and_reports(demo_config: Path) -> None:
    graph = build_asset_graph(load_config(demo_config))
    assert materialize(graph, graph.pre_partition, demo_config).success
    assert materialize(graph, graph.partitioned, demo_config, "2026-11-01").success
    reconciled = [asset for asset in graph.post_partition if asset.key == dg.AssetKey("reconciliation")]
    assert materialize(graph, reconciled, demo_config).success, "clean: its inputs and result are recorded"
    warehouse = lake_of(demo_config.parent)
    with writing(warehouse) as conn:
        # A stray row slipped into the allocations after they were checked: billed totals now differ.
        conn.execute(
            "insert into cost_allocations select * replace ('stray' as x_LineItemKey) from cost_allocations "
            "where x_SourceName = 'gcp-main' limit 1"
        )
    result = materialize(graph, graph.post_partition, demo_config)

    assert not result.success
    (evaluation,) = [e for e in result.get_asset_check_evaluations() if e.check_name == "zero_differences"]
    assert not evaluation.passed and evaluation.severity == dg.AssetCheckSeverity.ERROR
    assert [
        (f["source_name"], f["allocated_rows"], f["rows_focus_allocated_diff"])
        for f in evaluation.metadata["failures"].value
    ] == [("gcp-main", str(int(f["focus_rows"]) + 1), "-1") for f in evaluation.metadata["failures"].value]
    assert {"run_costs", "unattributed_costs", "reconciliation"} <= materialized(result)
    assert not materialized(result) & {"budget_variance", "post_mortem_reports"}
    assert [event.step_key for event in result.get_step_failure_events()] == ["reconciliation"]
    with reading(warehouse) as conn:
        assert conn.execute("select count(*) from budget_variance").fetchone() == (0,)
    assert not (demo_config.parent / ".runledger/reports/summary.html").exists()


def test_warning_checks_name_drift_and_offenders_without_failing_the_run(demo_config: Path) -> None:
    root = demo_config.parent
    late_file = root / GCP_EXPORT / "gcp_billing_export_resource_v1_01A2B3_C4D5E6_F7A8B9_20261130.jsonl"
    row = json.loads(next(line for line in sorted((root / GCP_EXPORT).glob("*.jsonl"))[-1].read_text().splitlines()))
    late_file.write_text(json.dumps(row | {"carbon_footprint_kg": "0.12"}) + "\n")
    # November's untagged resources are 2.9% of its spend (its spend with no run, 38.3%, is mostly
    # commitment fees, support and tax, which no tag moves; the 7B run's registered checkpoint
    # bucket after its window is the run's); the appended block replaces the demo's
    # own, so freshness is judged against the clock
    demo_config.write_text(
        demo_config.read_text() + "orchestration:\n  untagged_share_threshold: 0.02\n  freshness_max_age_hours: 0.5\n"
    )
    graph = build_asset_graph(load_config(demo_config))
    assert materialize(graph, graph.pre_partition, demo_config).success
    period = f"2026-{row['invoice']['month'][4:]}-01"
    loads = materialize(graph, graph.partitioned, demo_config, period)
    assert loads.success
    checks = {(e.asset_key.to_user_string(), e.check_name): e for e in loads.get_asset_check_evaluations()}
    drift = checks[("raw/gcp_main", "schema_drift")]
    assert not drift.passed and drift.severity == dg.AssetCheckSeverity.WARN
    assert drift.metadata["new_columns"].value == ["carbon_footprint_kg"]
    assert checks[("raw/aws_main", "schema_drift")].passed
    with reading(root) as conn:
        (newest_gcp_charge,) = conn.execute(
            "select max(ChargePeriodStart) from focus_line_items where x_SourceName = 'gcp-main'"
        ).fetchone()
    freshness = checks[("raw/gcp_main", "freshness")]
    assert not freshness.passed and freshness.severity == dg.AssetCheckSeverity.WARN
    assert freshness.metadata["newest_charge"].value == str(newest_gcp_charge)
    assert freshness.metadata["max_age_hours"].value == 0.5

    views = materialize(graph, graph.post_partition, demo_config)
    assert views.success and "post_mortem_reports" in materialized(views)
    (untagged,) = [e for e in views.get_asset_check_evaluations() if e.check_name == "untagged_share"]
    assert not untagged.passed and untagged.severity == dg.AssetCheckSeverity.WARN
    with reading(root) as conn:
        (largest,) = conn.execute(
            "select resource from unattributed_costs where billing_period = $p and taggable "
            "order by abs(effective_cost) desc limit 1",
            {"p": datetime.fromisoformat(period).date()},
        ).fetchone()
    offenders = untagged.metadata["top_offenders"].value.splitlines()
    assert len(offenders) == 2 + 6 and f"| {largest} |" in offenders[2]
    assert not [line for line in offenders if "| ckpt-7b |" in line]
    assert untagged.description == "untagged share above 2% in 2026-11 USD (2.9%)"
    # the demo's November and the late row's 1.71
    assert "| 2026-11 | USD | 72,262.90 | 27,664.70 | 2,118.25 | 2.93% |" in untagged.metadata["share_by_period"].value
    not_taggable = untagged.metadata["not_taggable"].value
    # the reservation fee (EffectiveCost 0) and its unused part, a row of its own
    assert "| 2026-11 | USD | commitment | 2 | 21,705.60 |" in not_taggable
    # the 7B run's checkpoint bucket after its window (39.82 before) is the run's storage now
    assert "outside registry window" not in not_taggable
    # with the tax the p5-cluster's nodes and the support they raise add: 990.72 and 69.35
    assert "| 2026-11 | USD | tax | 6 | 3,296.54 |" in not_taggable


def test_the_demo_is_judged_fresh_at_its_own_now_whatever_the_clock(demo_config: Path) -> None:
    graph = build_asset_graph(load_config(demo_config))
    assert materialize(graph, graph.pre_partition, demo_config).success
    loads = materialize(graph, graph.partitioned, demo_config, "2026-11-01")
    views = materialize(graph, graph.post_partition, demo_config)

    checks = {(e.asset_key.to_user_string(), e.check_name): e for e in loads.get_asset_check_evaluations()}
    for source in ("raw/aws_main", "raw/gcp_main"):
        freshness = checks[(source, "freshness")]
        assert freshness.passed, freshness.description
        assert (
            freshness.description
            == "newest charge 2026-11-28 00:00 UTC, 30.0 h old at 2026-11-29 06:00 UTC (limit 72 h)"
        )
        assert freshness.metadata["as_of"].value == "2026-11-29 06:00:00"
    (untagged,) = [e for e in views.get_asset_check_evaluations() if e.check_name == "untagged_share"]
    assert untagged.passed and untagged.description == "untagged share at most 25% in every billing period"


@pytest.fixture
def dagster_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A Dagster instance of its own, with the repo's dagster.yaml, as DAGSTER_HOME."""
    home = tmp_path / "dagster_home"
    home.mkdir()
    shutil.copy(REPO / "pipelines" / "orchestration" / "dagster.yaml", home / "dagster.yaml")
    monkeypatch.setenv("DAGSTER_HOME", str(home))
    return home


@pytest.mark.usefixtures("dagster_home")
def test_runledger_run_records_in_the_dagster_instance_of_dagster_home(demo_config: Path) -> None:
    run_nightly(demo_config, [date(2026, 11, 1)], echo=lambda line: None)

    with dg.DagsterInstance.get() as instance:
        runs = instance.get_runs()
        assert len(runs) == 3 and all(run.status == dg.DagsterRunStatus.SUCCESS for run in runs)
        assert {run.tags.get("runledger/warehouse") for run in runs} == {"writer"}
        for key in (["raw", "aws_main"], ["raw", "gcp_main"], ["cost_allocations"]):
            event = instance.get_latest_materialization_event(dg.AssetKey(key))
            assert event.dagster_event.partition == "2026-11-01", key
        raw_load = instance.get_latest_materialization_event(dg.AssetKey(["raw", "aws_main"])).asset_materialization
    with reading(demo_config.parent) as conn:
        loaded = conn.execute(
            "select loaded_rows, loaded_billed_cost from loads where source_name = 'aws-main' and status = 'loaded'"
        ).fetchall()
    assert loaded == [(raw_load.metadata["rows"].value, Decimal(raw_load.metadata["billed_cost"].value))]


@pytest.mark.usefixtures("dagster_home")
def test_a_run_of_the_nightly_job_writes_its_period_in_one_process(
    demo_config: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RUNLEDGER_CONFIG", str(demo_config))
    with dg.DagsterInstance.get() as instance:
        # the job as a run launched from the UI rebuilds it: from the code location's module
        location = ReconstructableRepository.for_module("pipelines.definitions", "defs", str(REPO))
        result = dg.execute_job(
            location.get_reconstructable_job(NIGHTLY_JOB),
            instance=instance,
            tags={"dagster/partition": "2026-11-01"},
            run_config=QUIET,
        )
        assert result.success
        records = instance.get_records_for_run(result.run_id).records
    started = [
        r.event_log_entry for r in records if r.event_log_entry.dagster_event_type == dg.DagsterEventType.STEP_START
    ]
    assert {entry.step_key for entry in started} >= {"raw__aws_main", "focus_line_items", "post_mortem_reports"}
    # every step in this process: no worker process started per step
    assert {entry.dagster_event.pid for entry in started} == {os.getpid()}
    assert not [r for r in records if r.event_log_entry.dagster_event_type == dg.DagsterEventType.STEP_WORKER_STARTING]
    with reading(demo_config.parent) as conn:
        periods = conn.execute("select distinct billing_period from loads where status = 'loaded'").fetchall()
    assert periods == [(date(2026, 11, 1),)]


def test_every_job_of_the_code_location_runs_in_process(demo_config: Path) -> None:
    defs = build_definitions(demo_config)
    jobs = [defs.resolve_job_def(name) for name in (NIGHTLY_JOB, MAINTENANCE_JOB)]
    # the job the UI's "Materialize" button runs
    jobs.append(defs.resolve_implicit_global_asset_job_def())
    assert {job.name: job.executor_def.name for job in jobs} == {job.name: "in_process" for job in jobs}
