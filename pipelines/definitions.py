"""The RunLedger code location, built from `runledger.yaml` when it loads.

`dg dev` (`make dev`) loads `defs`: the configuration (`$RUNLEDGER_CONFIG`, then
`./runledger.yaml`) is read then, never at import, and gives one raw load asset per billing
source. Without a configuration file the location still loads, with the layer assets only, and
its runs fail with the error naming the missing file. `runledger run --config FILE` builds the
same graph from FILE and materializes it in process.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import dagster as dg

from pipelines.attribution import assets as attribution_assets
from pipelines.attribution import clusters as attribution_clusters
from pipelines.budgets import assets as budgets_assets
from pipelines.clusters import assets as clusters_assets
from pipelines.config import RunLedgerConfig, load_config
from pipelines.config_file import default_config_path
from pipelines.config_rules import ConfigError
from pipelines.ingest.assets import build_focus_line_items, build_source_load_asset, source_asset_key
from pipelines.maintenance.assets import lake_maintenance
from pipelines.orchestration.resources import RunLedgerResource
from pipelines.orchestration.settings import Orchestration
from pipelines.orchestration.tables import with_table_schemas
from pipelines.plans import assets as plans_assets
from pipelines.progress import assets as progress_assets
from pipelines.recommendations import assets as recommendations_assets
from pipelines.reports import assets as reports_assets
from pipelines.schedules import build_maintenance_schedule, build_nightly_schedule
from pipelines.sensors import build_delivery_sensor
from pipelines.tags import assets as tags_assets
from pipelines.telemetry import assets as telemetry_assets
from pipelines.waste import assets as waste_assets

NIGHTLY_JOB = "runledger_nightly"
MAINTENANCE_JOB = "lake_upkeep"
# Runs that write the lake carry this tag: dagster.yaml limits how many run at once.
WAREHOUSE_RUN_TAG = {"runledger/warehouse": "writer"}
# Every asset these modules define is in the graph: a new asset needs no list edit.
ASSET_MODULES = [
    tags_assets,
    clusters_assets,
    attribution_assets,
    attribution_clusters,
    plans_assets,
    progress_assets,
    waste_assets,
    telemetry_assets,
    budgets_assets,
    recommendations_assets,
    reports_assets,
]


@dataclass(frozen=True)
class AssetGraph:
    """The assets of one configuration, in the stages `runledger run` materializes them in, each
    stage in dependency order (see `stages`).

    Attributes:
        source_loads: the raw load asset of each billing source, by source name.
        pre_partition: unpartitioned assets upstream of no partitioned one: the inputs (run
            registry, budget baselines, tag snapshots, run events).
        partitioned: the assets partitioned by billing period (raw loads, focus_line_items,
            cost_allocations), materialized once per period.
        post_partition: unpartitioned assets downstream of partitioned ones: views,
            reconciliation, budget variance and alerts, waste, reports.
    """

    source_loads: dict[str, dg.AssetsDefinition]
    pre_partition: list[dg.AssetsDefinition]
    partitioned: list[dg.AssetsDefinition]
    post_partition: list[dg.AssetsDefinition]

    @property
    def assets(self) -> list[dg.AssetsDefinition]:
        return self.pre_partition + self.partitioned + self.post_partition


def stages(
    assets: Sequence[dg.AssetsDefinition],
) -> tuple[list[dg.AssetsDefinition], list[dg.AssetsDefinition], list[dg.AssetsDefinition]]:
    """The assets split by their partitions and the graph: the unpartitioned ones with no
    partitioned asset upstream, the partitioned ones, and the unpartitioned ones downstream of a
    partitioned asset; each stage in dependency order (ties in the order given).

    Raises:
        DagsterInvalidDefinitionError: an unpartitioned asset is downstream of a partitioned asset
            and upstream of one, so no stage can hold it.
    """
    by_key = {key: asset for asset in assets for key in asset.keys}
    parents = {
        asset.key: [dep.asset_key for spec in asset.specs for dep in spec.deps if dep.asset_key in by_key]
        for asset in assets
    }
    ordered: dict[dg.AssetKey, dg.AssetsDefinition] = {}

    def visit(asset: dg.AssetsDefinition) -> None:
        if asset.key not in ordered:
            for parent in parents[asset.key]:
                visit(by_key[parent])
            ordered[asset.key] = asset

    for asset in assets:
        visit(asset)
    after_partitioned: set[dg.AssetKey] = set()
    for asset in ordered.values():
        if asset.partitions_def is None and any(
            by_key[parent].partitions_def is not None or parent in after_partitioned for parent in parents[asset.key]
        ):
            after_partitioned.add(asset.key)
    for asset in ordered.values():
        stuck = [parent for parent in parents[asset.key] if parent in after_partitioned]
        if asset.partitions_def is not None and stuck:
            raise dg.DagsterInvalidDefinitionError(
                f"{asset.key.to_user_string()} is partitioned by billing period, but its upstream "
                f"{', '.join(key.to_user_string() for key in stuck)} is unpartitioned and downstream of a partitioned "
                "asset: no stage of the nightly run can hold it; partition it or move the dependency"
            )
    return (
        [asset for key, asset in ordered.items() if asset.partitions_def is None and key not in after_partitioned],
        [asset for asset in ordered.values() if asset.partitions_def is not None],
        [asset for key, asset in ordered.items() if key in after_partitioned],
    )


def build_asset_graph(config: RunLedgerConfig | None) -> AssetGraph:
    """The asset graph for `config`: a raw load per billing source (none without a config), every
    asset documented with the columns of the warehouse tables it holds."""
    sources = config.billing_sources if config else []
    keys: dict[dg.AssetKey, str] = {}
    for source in sources:
        key = source_asset_key(source.name)
        if key in keys:
            raise dg.DagsterInvalidDefinitionError(
                f"sources {keys[key]!r} and {source.name!r} both become asset {key.to_user_string()}; rename one"
            )
        keys[key] = source.name
    loads = with_table_schemas([build_source_load_asset(source) for source in sources])
    source_loads = {source.name: load for source, load in zip(sources, loads)}
    layers = with_table_schemas([build_focus_line_items(list(keys)), *dg.load_assets_from_modules(ASSET_MODULES)])
    pre_partition, partitioned, post_partition = stages([*loads, *layers])
    return AssetGraph(
        source_loads=source_loads,
        pre_partition=pre_partition,
        partitioned=partitioned,
        post_partition=post_partition,
    )


def nightly_job(graph: AssetGraph) -> dg.UnresolvedAssetJobDefinition:
    """The `runledger_nightly` job of the graph: the schedule, the sensor, the UI and `runledger run`
    (a stage of it per run) all run it."""
    return dg.define_asset_job(
        NIGHTLY_JOB,
        selection=dg.AssetSelection.assets(*graph.assets),
        tags=WAREHOUSE_RUN_TAG,
        description="The nightly chain for one billing period: raw loads of every source → focus_line_items → "
        "cost_allocations → views, reconciliation → budget variance, waste → reports.",
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
    job = nightly_job(graph)
    source_keys = {name: asset.key for name, asset in graph.source_loads.items()}
    downstream_keys = [key for asset in graph.assets for key in asset.keys if key not in source_keys.values()]
    maintenance_job = dg.define_asset_job(
        MAINTENANCE_JOB,
        selection=dg.AssetSelection.assets(lake_maintenance),
        tags=WAREHOUSE_RUN_TAG,
        description="The lake's weekly upkeep: old snapshots expired, small files merged, unread files deleted.",
    )
    orchestration = config.orchestration if config else Orchestration()
    schedules = []
    for key, build, schedule_job in (
        ("cron", build_nightly_schedule, job),
        ("maintenance_cron", build_maintenance_schedule, maintenance_job),
    ):
        try:
            schedules.append(build(schedule_job, orchestration))
        except dg.DagsterInvalidDefinitionError as error:
            raise ConfigError(f"{path}: orchestration.{key}: {error}") from None
    return dg.Definitions(
        assets=[*graph.assets, lake_maintenance],
        jobs=[job, maintenance_job],
        schedules=schedules,
        sensors=[build_delivery_sensor(job, config, source_keys, downstream_keys)],
        resources={"runledger": RunLedgerResource(config_path=str(path) if config else None)},
        # Every run writes one billing period (a partition): its steps take turns on the lake
        # (its writer lock, the `lake_writer` pool), so a process per step only adds a Python
        # start-up and a code location load per step, a minute a run for seconds of work.
        executor=dg.in_process_executor,
    )


@dg.definitions
def defs() -> dg.Definitions:
    """The code location `dg dev` (`make dev`) loads, as pyproject.toml's [tool.dg.project] names it."""
    return build_definitions()
