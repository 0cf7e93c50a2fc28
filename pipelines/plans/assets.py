"""`budget_baselines`, an input of the night: each budgeted run's estimate from its budget file,
read by the progress, waste and budget steps above this layer."""

import dagster as dg

from pipelines.orchestration.resources import WAREHOUSE_POOL, RunLedgerResource
from pipelines.orchestration.tables import holds_tables
from pipelines.plans.files import load_budgets_with_files
from pipelines.plans.tables import replace_budget_baselines_if_changed
from pipelines.warehouse.connection import transactions
from pipelines.warehouse.sql import read_sql


@dg.asset(
    group_name="budgets",
    owners=["team:finops"],
    kinds={"duckdb"},
    metadata=holds_tables("budget_baselines"),
    pool=WAREHOUSE_POOL,
)
def budget_baselines(runledger: RunLedgerResource) -> dg.MaterializeResult:
    """Each budgeted run's pre-training estimate per cost category in `budget_baselines`, replaced
    whole from `budgets/<run>.yaml` and the resource model (training FLOPs, MFU, GPU-hours,
    checkpoints, egress); not written when it already holds the same rows."""
    config = runledger.load_config()
    budgets = load_budgets_with_files(config.budgets_path) if config.budgets_path else []
    with runledger.warehouse(config) as conn:
        for attempt in transactions(conn):
            with attempt:
                replaced = replace_budget_baselines_if_changed(conn, budgets, config.thresholds)
        (rows,) = conn.execute(read_sql("inputs/budget_baselines", "count")).fetchone()
    return dg.MaterializeResult(
        metadata={
            "budgets": dg.MetadataValue.int(len(budgets)),
            "rows": dg.MetadataValue.int(rows),
            "replaced": dg.MetadataValue.bool(replaced),
        }
    )
