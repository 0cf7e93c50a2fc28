"""Report assets: post-mortem reports per run and a summary, read from the warehouse only."""

import dagster as dg

from pipelines.attribution.assets import (
    cost_allocations,
    reconciliation,
    run_costs,
    run_costs_fully_loaded,
    run_registry,
    unattributed_costs,
)
from pipelines.attribution.clusters import cluster_utilization, run_cluster_share
from pipelines.budgets.assets import budget_alerts, budget_variance, group_budget_variance, variance_causes
from pipelines.ingest.assets import FOCUS_LINE_ITEMS
from pipelines.orchestration.resources import WAREHOUSE_POOL, RunLedgerResource
from pipelines.plans.assets import budget_baselines
from pipelines.progress.assets import provisional_spend, run_events, run_progress
from pipelines.recommendations.assets import recommendations
from pipelines.reports import write_reports
from pipelines.telemetry.assets import run_utilization
from pipelines.waste.assets import waste


@dg.asset(
    deps=[
        FOCUS_LINE_ITEMS,
        cost_allocations,
        run_registry,
        run_costs,
        unattributed_costs,
        reconciliation,
        budget_baselines,
        budget_variance,
        budget_alerts,
        group_budget_variance,
        waste,
        run_progress,
        variance_causes,
        run_events,
        provisional_spend,
        cluster_utilization,
        run_cluster_share,
        run_utilization,
        run_costs_fully_loaded,
        recommendations,
    ],
    group_name="reports",
    owners=["team:finops"],
    kinds={"html", "markdown"},
    pool=WAREHOUSE_POOL,
)
def post_mortem_reports(context: dg.AssetExecutionContext, runledger: RunLedgerResource) -> dg.MaterializeResult:
    """Post-mortem reports under `reports_dir`: per run a self-contained HTML file (inline SVG
    charts) and a Markdown twin showing the same charts as SVG files, and a summary of all runs,
    read from the warehouse only; a run's report is rewritten only when the data it shows changed."""
    config = runledger.load_config()
    with runledger.reader(config) as conn:
        written = write_reports(conn, config.reports_path)
    paths = [str(p) for p in written.paths]
    rendered = written.rendered_line
    context.log.info(rendered)
    return dg.MaterializeResult(
        metadata={
            "paths": dg.MetadataValue.json(paths),
            "files": dg.MetadataValue.int(len(paths)),
            "rendered_runs": dg.MetadataValue.int(len(written.rendered)),
            "unchanged_runs": dg.MetadataValue.int(len(written.runs) - len(written.rendered)),
            "rendered": dg.MetadataValue.text(rendered),
        }
    )
