"""`budget_baselines` and `group_budgets`, inputs of the night: each budgeted run's estimate and
each group budget's amounts from the budget files, read by the progress, waste and budget steps
above this layer."""

import dagster as dg

from pipelines.orchestration.resources import WAREHOUSE_POOL, RunLedgerResource
from pipelines.orchestration.tables import holds_tables
from pipelines.plans.files import BudgetFolder, read_budget_folder, require_scope_dimensions
from pipelines.plans.tables import replace_budget_baselines_if_changed, replace_group_budgets_if_changed
from pipelines.warehouse.connection import transactions
from pipelines.warehouse.sql import read_sql


@dg.asset(
    group_name="budgets",
    owners=["team:finops"],
    kinds={"duckdb"},
    metadata=holds_tables("budget_baselines", "group_budgets"),
    pool=WAREHOUSE_POOL,
)
def budget_baselines(runledger: RunLedgerResource) -> dg.MaterializeResult:
    """Each budgeted run's pre-training estimate per cost category in `budget_baselines`, replaced
    whole from `budgets/<run>.yaml` and the resource model (training FLOPs, MFU, GPU-hours,
    checkpoints, egress), and each group budget's amounts (`scope:` files) in `group_budgets`; a
    table is not written when it already holds the same rows."""
    config = runledger.load_config()
    folder = read_budget_folder(config.budgets_path) if config.budgets_path else BudgetFolder([], [])
    require_scope_dimensions(folder.groups, config.attribution.custom_dimensions)
    with runledger.warehouse(config) as conn:
        for attempt in transactions(conn):
            with attempt:
                replaced = replace_budget_baselines_if_changed(conn, folder.runs, config.thresholds)
                replaced_groups = replace_group_budgets_if_changed(conn, folder.groups)
        (rows,) = conn.execute(read_sql("inputs/budget_baselines", "count")).fetchone()
        (group_rows,) = conn.execute(read_sql("inputs/group_budgets", "count")).fetchone()
    return dg.MaterializeResult(
        metadata={
            "budgets": dg.MetadataValue.int(len(folder.runs)),
            "rows": dg.MetadataValue.int(rows),
            "replaced": dg.MetadataValue.bool(replaced),
            "group_budgets": dg.MetadataValue.int(len(folder.groups)),
            "group_rows": dg.MetadataValue.int(group_rows),
            "groups_replaced": dg.MetadataValue.bool(replaced_groups),
        }
    )
