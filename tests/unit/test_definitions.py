"""The Dagster code location: built from runledger.yaml, loads, validates, and every asset is
described, owned and grouped; writers share one pool; sources retry only transient errors."""

from pathlib import Path

import dagster as dg
import pytest
from botocore.exceptions import ClientError

from pipelines.config import ConfigError
from pipelines.definitions import NIGHTLY_JOB, build_definitions, defs
from pipelines.demo import write_demo
from pipelines.orchestration.resources import WAREHOUSE_POOL
from pipelines.orchestration.retries import is_transient, retry_request
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
    "budget_alerts",
    "post_mortem_reports",
    "run_events",
    "waste",
}


@pytest.fixture(scope="module")
def demo_defs(tmp_path_factory: pytest.TempPathFactory) -> dg.Definitions:
    return build_definitions(write_demo(tmp_path_factory.mktemp("demo")))


def asset_specs(definitions: dg.Definitions) -> dict[str, dg.AssetSpec]:
    return {spec.key.to_user_string(): spec for spec in definitions.resolve_all_asset_specs()}


def test_definitions_load_and_validate_with_one_raw_load_per_source(demo_defs: dg.Definitions) -> None:
    dg.Definitions.validate_loadable(demo_defs)
    assert set(asset_specs(demo_defs)) == LAYER_ASSETS | {"raw/aws_main", "raw/gcp_main"}
    graph = demo_defs.resolve_asset_graph()
    assert graph.get(dg.AssetKey("focus_line_items")).parent_keys == {
        dg.AssetKey(["raw", "aws_main"]),
        dg.AssetKey(["raw", "gcp_main"]),
    }
    assert dg.AssetKey("reconciliation") in graph.get(dg.AssetKey("budget_variance")).parent_keys
    assert dg.AssetKey("reconciliation") in graph.get(dg.AssetKey("budget_alerts")).parent_keys
    assert {"cost_allocations", "run_costs", "budget_baselines", "run_registry", "run_events", "reconciliation"} <= {
        key.to_user_string() for key in graph.get(dg.AssetKey("waste")).parent_keys
    }
    assert dg.AssetKey("waste") in graph.get(dg.AssetKey("post_mortem_reports")).parent_keys
    job = demo_defs.resolve_job_def(NIGHTLY_JOB)
    assert job.tags == {"runledger/warehouse": "writer"} and job.partitions_def is not None


def test_every_asset_has_group_owner_kind_and_description(demo_defs: dg.Definitions) -> None:
    for key, spec in asset_specs(demo_defs).items():
        assert spec.group_name and spec.group_name != "default", key
        assert spec.owners, key
        assert spec.kinds, key
        assert spec.description and len(spec.description) > 40, key


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
        ("reconciliation", "zero_differences"),
        ("unattributed_costs", "untagged_share"),
        ("raw/aws_main", "schema_drift"),
        ("raw/aws_main", "freshness"),
        ("raw/gcp_main", "schema_drift"),
        ("raw/gcp_main", "freshness"),
    }
    assert {name for (_, name), spec in checks.items() if spec.blocking} == {"conservation", "zero_differences"}


def test_the_code_location_reads_the_config_when_it_loads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    fallback = defs()
    dg.Definitions.validate_loadable(fallback)
    assert set(asset_specs(fallback)) == LAYER_ASSETS
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
