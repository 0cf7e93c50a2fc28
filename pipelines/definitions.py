"""The RunLedger code location, built from `runledger.yaml` when it loads.

`dagster dev` loads `defs`: the configuration (`$RUNLEDGER_CONFIG`, then `./runledger.yaml`) is
read then, never at import, and gives one raw load asset per billing source. Without a
configuration file the location still loads, with the layer assets only, and its runs fail
with the error naming the missing file. `runledger run --config FILE` builds the same graph
from FILE and materializes it in process.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import dagster as dg

from pipelines.attribution.assets import cost_allocations, reconciliation, run_costs, run_registry, unattributed_costs
from pipelines.budgets.assets import budget_alerts, budget_baselines, budget_variance
from pipelines.config import ConfigError, Orchestration, RunLedgerConfig, default_config_path, load_config
from pipelines.ingest.assets import build_focus_line_items, build_source_load_asset, source_asset_key
from pipelines.orchestration.resources import RunLedgerResource
from pipelines.reports.assets import post_mortem_reports
from pipelines.schedules import build_nightly_schedule
from pipelines.sensors import build_delivery_sensor
from pipelines.tags.assets import resource_tag_snapshots
from pipelines.waste.assets import run_events, waste

NIGHTLY_JOB = "runledger_nightly"
# Runs of the nightly job write one DuckDB file: dagster.yaml allows one such run at a time.
WAREHOUSE_RUN_TAG = {"runledger/warehouse": "writer"}
PRE_PARTITION_ASSETS = [run_registry, budget_baselines, resource_tag_snapshots, run_events]
POST_PARTITION_ASSETS = [
    run_costs,
    unattributed_costs,
    reconciliation,
    budget_variance,
    budget_alerts,
    waste,
    post_mortem_reports,
]


@dataclass(frozen=True)
class AssetGraph:
    """The assets of one configuration, in the order `runledger run` materializes them.

    Attributes:
        source_loads: the raw load asset of each billing source, by source name.
        pre_partition: unpartitioned inputs (run registry, budget baselines, tag snapshots, run events).
        partitioned: raw loads, focus_line_items and cost_allocations (per billing period).
        post_partition: views, reconciliation, budget variance, waste and reports.
    """

    source_loads: dict[str, dg.AssetsDefinition]
    pre_partition: list[dg.AssetsDefinition]
    partitioned: list[dg.AssetsDefinition]
    post_partition: list[dg.AssetsDefinition]

    @property
    def assets(self) -> list[dg.AssetsDefinition]:
        return self.pre_partition + self.partitioned + self.post_partition


def build_asset_graph(config: RunLedgerConfig | None) -> AssetGraph:
    """The asset graph for `config`: a raw load per billing source (none without a config)."""
    sources = config.billing_sources if config else []
    keys: dict[dg.AssetKey, str] = {}
    for source in sources:
        key = source_asset_key(source.name)
        if key in keys:
            raise dg.DagsterInvalidDefinitionError(
                f"sources {keys[key]!r} and {source.name!r} both become asset {key.to_user_string()}; rename one"
            )
        keys[key] = source.name
    source_loads = {source.name: build_source_load_asset(source) for source in sources}
    focus_line_items = build_focus_line_items(list(keys))
    return AssetGraph(
        source_loads=source_loads,
        pre_partition=list(PRE_PARTITION_ASSETS),
        partitioned=[*source_loads.values(), focus_line_items, cost_allocations],
        post_partition=list(POST_PARTITION_ASSETS),
    )


def build_definitions(config_path: Path | None = None) -> dg.Definitions:
    """Assets, checks, the nightly job, schedule and delivery sensor for one configuration.

    Args:
        config_path: `runledger.yaml`; None means `$RUNLEDGER_CONFIG`, then `./runledger.yaml`.
            A missing default file gives the layer assets only; a missing explicit file or an
            invalid one raises `ConfigError`.
    """
    path = (config_path or default_config_path()).resolve()
    config = load_config(path) if config_path or path.is_file() else None
    graph = build_asset_graph(config)
    job = dg.define_asset_job(
        NIGHTLY_JOB,
        selection=dg.AssetSelection.assets(*graph.assets),
        tags=WAREHOUSE_RUN_TAG,
        description="The nightly chain for one billing period: raw loads of every source → focus_line_items → "
        "cost_allocations → views, reconciliation → budget variance, waste → reports.",
    )
    source_keys = {name: asset.key for name, asset in graph.source_loads.items()}
    downstream_keys = [key for asset in graph.assets for key in asset.keys if key not in source_keys.values()]
    orchestration = config.orchestration if config else Orchestration()
    try:
        schedule = build_nightly_schedule(job, orchestration)
    except dg.DagsterInvalidDefinitionError as error:
        raise ConfigError(f"{path}: orchestration.cron: {error}") from None
    return dg.Definitions(
        assets=graph.assets,
        jobs=[job],
        schedules=[schedule],
        sensors=[build_delivery_sensor(job, config, source_keys, downstream_keys)],
        resources={"runledger": RunLedgerResource(config_path=str(path) if config else None)},
    )


@dg.definitions
def defs() -> dg.Definitions:
    """The code location of `dagster dev` / `make dev` (`pipelines.definitions`)."""
    return build_definitions()
