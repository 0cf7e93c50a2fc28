"""The RunLedger code location: `dagster dev` loads `defs`; `runledger run` materializes the
same assets in process."""

import dagster as dg

from pipelines.attribution.assets import cost_allocations, reconciliation, run_costs, run_registry, unattributed_costs
from pipelines.budgets.assets import budget_alerts, budget_baselines, budget_variance
from pipelines.ingest.assets import focus_line_items
from pipelines.reports.assets import post_mortem_reports
from pipelines.resources import RunLedgerResource

PRE_PARTITION_ASSETS = [run_registry, budget_baselines]
PARTITIONED_ASSETS = [focus_line_items, cost_allocations]
POST_PARTITION_ASSETS = [run_costs, unattributed_costs, reconciliation, budget_variance, budget_alerts, post_mortem_reports]
ASSETS = PRE_PARTITION_ASSETS + PARTITIONED_ASSETS + POST_PARTITION_ASSETS

defs = dg.Definitions(assets=ASSETS, resources={"runledger": RunLedgerResource()})
