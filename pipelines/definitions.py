"""The RunLedger code location: `dagster dev` loads `defs`; `runledger run` materializes the
same assets in process."""

import dagster as dg

from pipelines.attribution.assets import cost_allocations, reconciliation, run_costs, run_registry, unattributed_costs
from pipelines.budgets.assets import budget_baselines, budget_variance
from pipelines.ingest.assets import focus_line_items
from pipelines.reports.assets import post_mortem_reports
from pipelines.resources import RunLedgerResource
from pipelines.tags.assets import resource_tag_snapshots

PRE_PARTITION_ASSETS = [run_registry, budget_baselines, resource_tag_snapshots]
PARTITIONED_ASSETS = [focus_line_items, cost_allocations]
POST_PARTITION_ASSETS = [run_costs, unattributed_costs, reconciliation, budget_variance, post_mortem_reports]
ASSETS = PRE_PARTITION_ASSETS + PARTITIONED_ASSETS + POST_PARTITION_ASSETS

defs = dg.Definitions(assets=ASSETS, resources={"runledger": RunLedgerResource()})
