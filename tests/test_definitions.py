"""The Dagster code location: loads, validates, and every asset is described and owned."""

import dagster as dg

from pipelines.definitions import ASSETS, defs


def test_definitions_load_and_validate() -> None:
    dg.Definitions.validate_loadable(defs)
    keys = {key.to_user_string() for asset in ASSETS for key in asset.keys}
    assert {"focus_line_items", "cost_allocations", "run_costs", "unattributed_costs", "reconciliation",
            "budget_baselines", "budget_variance", "post_mortem_reports", "run_registry"} <= keys


def test_every_asset_has_group_owner_and_description() -> None:
    for asset in ASSETS:
        for key in asset.keys:
            spec = asset.specs_by_key[key]
            assert spec.group_name and spec.group_name != "default", key
            assert spec.owners, key
            assert spec.description and len(spec.description) > 40, key


def test_billing_partitions_are_monthly_and_blocking_checks_exist() -> None:
    partitioned = {key.to_user_string() for asset in ASSETS if asset.partitions_def for key in asset.keys}
    assert partitioned == {"focus_line_items", "cost_allocations"}
    blocking = {spec.name for asset in ASSETS for spec in asset.check_specs if spec.blocking}
    assert blocking == {"conservation", "zero_differences"}
