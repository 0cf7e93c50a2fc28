"""The Dagster code location: built from runledger.yaml, loads, validates; every data dependency
is an edge and the stages of `runledger run` follow from the graph; every asset is described,
owned, grouped and documents the columns of its table; writers share one pool; sources retry only
transient errors."""

from pathlib import Path

import dagster as dg
import pytest
from botocore.exceptions import ClientError

from pipelines.config import load_config
from pipelines.config_rules import ConfigError
from pipelines.definitions import MAINTENANCE_JOB, NIGHTLY_JOB, build_asset_graph, build_definitions, defs, stages
from pipelines.demo import write_demo
from pipelines.orchestration.partitions import billing_periods
from pipelines.orchestration.resources import WAREHOUSE_POOL
from pipelines.orchestration.retries import is_transient, retry_request
from pipelines.orchestration.tables import tables_held
from pipelines.schedules import MAINTENANCE_SCHEDULE
from pipelines.warehouse.catalog import warehouse_catalog
from pipelines.warehouse.conservation import ConservationError

LAYER_ASSETS = {
    "run_registry",
    "budget_baselines",
    "resource_tag_snapshots",
    "focus_line_items",
    "cost_allocations",
    "run_costs",
    "unattributed_costs",
    "reconciliation",
    "budget_variance",
    "group_budget_variance",
    "budget_alerts",
    "alert_deliveries",
    "post_mortem_reports",
    "run_events",
    "waste",
    "run_progress",
    "variance_causes",
    "provisional_spend",
    "commitment_utilization",
    "cluster_usage",
    "cluster_utilization",
    "run_cluster_share",
    "gpu_utilization",
    "run_utilization",
    "run_costs_fully_loaded",
    "recommendations",
}


@pytest.fixture(scope="module")
def demo_config(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_demo(tmp_path_factory.mktemp("demo"))


@pytest.fixture(scope="module")
def demo_defs(demo_config: Path) -> dg.Definitions:
    return build_definitions(demo_config)


def asset_specs(definitions: dg.Definitions) -> dict[str, dg.AssetSpec]:
    return {spec.key.to_user_string(): spec for spec in definitions.resolve_all_asset_specs()}


# Each asset's upstream assets: those holding a table it reads (tests/integration/test_orchestration.py
# checks this against the statements each asset runs), and `reconciliation` before what must not be
# computed from unbalanced numbers.
UPSTREAM = {
    "raw/aws_main": set(),
    "raw/gcp_main": set(),
    "run_registry": set(),
    "budget_baselines": set(),
    "resource_tag_snapshots": set(),
    "run_events": set(),
    "cluster_usage": set(),
    "gpu_utilization": set(),
    "focus_line_items": {"raw/aws_main", "raw/gcp_main"},
    "cost_allocations": {"focus_line_items", "run_registry", "resource_tag_snapshots", "cluster_usage"},
    "cluster_utilization": {"cost_allocations"},
    "run_cluster_share": {"cost_allocations", "cluster_utilization"},
    "run_utilization": {
        "gpu_utilization",
        "cost_allocations",
        "focus_line_items",
        "resource_tag_snapshots",
        "cluster_usage",
        "run_events",
        "reconciliation",
    },
    "run_costs": {"cost_allocations", "run_registry"},
    "unattributed_costs": {"focus_line_items", "cost_allocations"},
    "run_costs_fully_loaded": {"cost_allocations", "unattributed_costs", "reconciliation"},
    "reconciliation": {"focus_line_items", "cost_allocations"},
    "budget_variance": {
        "budget_baselines",
        "cost_allocations",
        "reconciliation",
        "focus_line_items",
        "run_events",
        "run_progress",
    },
    "budget_alerts": {
        "budget_baselines",
        "cost_allocations",
        "reconciliation",
        "focus_line_items",
        "run_events",
        "run_utilization",
    },
    "group_budget_variance": {"budget_baselines", "cost_allocations", "reconciliation", "focus_line_items"},
    "alert_deliveries": {"budget_alerts", "run_costs"},
    "waste": {
        "focus_line_items",
        "cost_allocations",
        "reconciliation",
        "run_costs",
        "run_registry",
        "budget_baselines",
        "run_events",
        "run_utilization",
    },
    "run_progress": {"focus_line_items", "cost_allocations", "reconciliation", "budget_baselines", "run_events"},
    "variance_causes": {
        "reconciliation",
        "budget_baselines",
        "budget_variance",
        "waste",
        "run_progress",
        "run_utilization",
    },
    "provisional_spend": {"cost_allocations", "reconciliation", "run_events"},
    "commitment_utilization": {"focus_line_items", "cost_allocations", "reconciliation"},
    "post_mortem_reports": {
        "focus_line_items",
        "cost_allocations",
        "run_registry",
        "run_costs",
        "unattributed_costs",
        "reconciliation",
        "budget_baselines",
        "budget_variance",
        "budget_alerts",
        "group_budget_variance",
        "waste",
        "run_progress",
        "variance_causes",
        "run_events",
        "provisional_spend",
        "cluster_utilization",
        "run_cluster_share",
        "run_utilization",
        "run_costs_fully_loaded",
        "recommendations",
    },
    "recommendations": {
        "focus_line_items",
        "cost_allocations",
        "run_costs",
        "run_registry",
        "budget_baselines",
        "run_events",
        "run_progress",
        "run_utilization",
        "waste",
        "reconciliation",
    },
}


def test_definitions_load_and_validate_with_one_raw_load_per_source(demo_defs: dg.Definitions) -> None:
    dg.Definitions.validate_loadable(demo_defs)
    assert set(asset_specs(demo_defs)) == LAYER_ASSETS | {"raw/aws_main", "raw/gcp_main", "lake_maintenance"}
    graph = demo_defs.resolve_asset_graph()
    assert {
        key.to_user_string(): {parent.to_user_string() for parent in graph.get(key).parent_keys}
        for key in graph.get_all_asset_keys()
    } == UPSTREAM | {"lake_maintenance": set()}
    job = demo_defs.resolve_job_def(NIGHTLY_JOB)
    assert job.tags == {"runledger/warehouse": "writer"} and job.partitions_def is not None
    assert "lake_maintenance" not in {key.to_user_string() for key in job.asset_layer.executable_asset_keys}
    upkeep = demo_defs.resolve_job_def(MAINTENANCE_JOB)
    assert {key.to_user_string() for key in upkeep.asset_layer.executable_asset_keys} == {"lake_maintenance"}
    schedules = {schedule.name: schedule for schedule in demo_defs.schedules}
    assert schedules[MAINTENANCE_SCHEDULE].cron_schedule == "0 5 * * 0"


def keys(assets: list[dg.AssetsDefinition]) -> list[str]:
    return [asset.key.to_user_string() for asset in assets]


def test_runledger_run_stages_follow_from_partitions_and_the_graph(demo_config: Path) -> None:
    graph = build_asset_graph(load_config(demo_config))
    assert set(keys(graph.pre_partition)) == {
        "run_registry",
        "budget_baselines",
        "resource_tag_snapshots",
        "run_events",
        "cluster_usage",
        "gpu_utilization",
    }
    assert set(keys(graph.partitioned)) == {"raw/aws_main", "raw/gcp_main", "focus_line_items", "cost_allocations"}
    assert set(keys(graph.post_partition)) == LAYER_ASSETS - set(keys(graph.pre_partition + graph.partitioned))
    order = keys(graph.assets)
    for asset, parents in UPSTREAM.items():
        assert all(order.index(parent) < order.index(asset) for parent in parents), asset

    @dg.asset
    def exchange_rates() -> None: ...

    @dg.asset(deps=[exchange_rates], partitions_def=billing_periods)
    def converted_costs() -> None: ...

    @dg.asset(deps=["waste"])
    def waste_digest() -> None: ...

    pre, partitioned, post = stages([waste_digest, *graph.assets, converted_costs, exchange_rates])
    assert "exchange_rates" in keys(pre) and "converted_costs" in keys(partitioned)
    assert keys(post).index("waste") < keys(post).index("waste_digest")

    @dg.asset(deps=["reconciliation"], partitions_def=billing_periods)
    def reconciled_costs() -> None: ...

    with pytest.raises(dg.DagsterInvalidDefinitionError, match="reconciliation is unpartitioned and downstream"):
        stages([*graph.assets, reconciled_costs])


def test_every_table_asset_documents_its_columns_from_the_schema(demo_defs: dg.Definitions) -> None:
    catalog = warehouse_catalog()
    held: set[str] = set()
    for key, spec in asset_specs(demo_defs).items():
        tables = tables_held(spec)
        held |= set(tables)
        assert set(tables) <= set(catalog), key
        if key in ("post_mortem_reports", "lake_maintenance"):  # files, or the lake's upkeep: no table
            assert not tables and "dagster/column_schema" not in spec.metadata
            continue
        table = catalog[tables[0]]
        assert spec.metadata["dagster/table_name"] == table.name, key
        assert [(c.name, c.type, c.description) for c in spec.metadata["dagster/column_schema"].columns] == [
            (c.name, c.data_type, c.description) for c in table.columns
        ], key
    assert held == set(catalog) - {"schema_version", "lake_owners"}  # written by every writer as it connects
    columns = {c.name: c for c in asset_specs(demo_defs)["cost_allocations"].metadata["dagster/column_schema"].columns}
    assert columns["billed_cost"].type == "DECIMAL(38,10)" and not columns["billed_cost"].constraints.nullable
    assert "sum to exactly 1" in columns["allocation_ratio"].description


def test_source_kinds_and_descriptions_say_which_engine_maps_them(demo_defs: dg.Definitions) -> None:
    specs = asset_specs(demo_defs)
    assert set(specs["raw/aws_main"].kinds) == {"aws", "duckdb"}
    assert "DuckDB maps its CUR 2.0 Parquet files onto FOCUS 1.2" in specs["raw/aws_main"].description
    assert set(specs["raw/gcp_main"].kinds) == {"gcp", "polars", "duckdb"}
    assert "polars reads and types" in specs["raw/gcp_main"].description
    assert "normalized with polars" not in specs["raw/aws_main"].description


def test_every_asset_has_group_owner_kind_and_description(demo_defs: dg.Definitions) -> None:
    for key, spec in asset_specs(demo_defs).items():
        groups = {
            "ingest", "clusters", "attribution", "telemetry", "budgets", "waste", "recommendations", "reports",
            "maintenance",
        }  # fmt: skip
        assert spec.group_name in groups, key
        assert spec.owners == ["team:finops"], key
        assert spec.kinds, key
        assert spec.description and len(spec.description) > 100, key


def test_every_writer_runs_in_the_duckdb_pool(demo_defs: dg.Definitions) -> None:
    for asset in demo_defs.assets:
        assert asset.op.pool == WAREHOUSE_POOL, asset.key
        assert asset.op.retry_policy is None, asset.key  # sources request retries for transient errors only


def test_checks_blocking_and_warning(demo_defs: dg.Definitions) -> None:
    checks = {
        (spec.asset_key.to_user_string(), spec.name): spec for asset in demo_defs.assets for spec in asset.check_specs
    }
    assert set(checks) == {
        ("cost_allocations", "conservation"),
        ("cost_allocations", "cluster_capacity"),
        ("cluster_usage", "unmapped_hosts"),
        ("reconciliation", "zero_differences"),
        ("unattributed_costs", "untagged_share"),
        ("raw/aws_main", "schema_drift"),
        ("raw/aws_main", "freshness"),
        ("raw/gcp_main", "schema_drift"),
        ("raw/gcp_main", "freshness"),
        ("budget_alerts", "gpu_hours_threshold"),
        ("budget_alerts", "wall_clock_threshold"),
        ("budget_alerts", "storage_threshold"),
        ("budget_alerts", "daily_spend_anomaly_threshold"),
        ("budget_alerts", "idle_gpus_threshold"),
        ("budget_alerts", "low_gpu_utilization_threshold"),
        ("budget_alerts", "data_loading_share_threshold"),
        ("budget_alerts", "group_budget_threshold"),
        ("run_utilization", "unattributed_gpu_hours"),
    }
    assert {name for (_, name), spec in checks.items() if spec.blocking} == {"conservation", "zero_differences"}


def test_the_code_location_reads_the_config_when_it_loads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    fallback = defs()
    dg.Definitions.validate_loadable(fallback)
    assert set(asset_specs(fallback)) == LAYER_ASSETS | {"lake_maintenance"}
    assert fallback.resolve_sensor_def("new_billing_deliveries") and fallback.resolve_schedule_def("nightly_refresh")

    config = write_demo(tmp_path / "project")
    monkeypatch.setenv("RUNLEDGER_CONFIG", str(config))
    assert {"raw/aws_main", "raw/gcp_main"} <= set(asset_specs(defs()))

    text = config.read_text()
    config.write_text(text + "orchestration:\n  timezone: Mars/Olympus\n")
    with pytest.raises(ConfigError, match=r"orchestration\.timezone"):
        defs()
    config.write_text(text + "orchestration:\n  cron: '61 6 * * *'\n")
    with pytest.raises(ConfigError, match=r"orchestration\.cron"):
        defs()


def test_only_connection_and_throttling_errors_are_retried() -> None:
    throttled = ClientError({"Error": {"Code": "SlowDown", "Message": "Please reduce your request rate."}}, "GetObject")
    denied = ClientError({"Error": {"Code": "AccessDenied", "Message": "Access Denied"}}, "GetObject")
    assert is_transient(throttled) and is_transient(ConnectionResetError()) and is_transient(TimeoutError())
    assert not is_transient(denied) and not is_transient(ConservationError("totals differ"))
    retries = [retry_request(throttled, attempt) for attempt in range(3)]
    assert [(r.max_retries, r.seconds_to_wait) for r in retries] == [(3, 60), (3, 120), (3, 240)]
    assert retry_request(ConservationError("aws-main 2026-10: totals differ"), 0) is None
    assert retry_request(denied, 0) is None
