"""Budget assets: pre-training baselines and the variance of actual spend against them."""

import dagster as dg

from pipelines.attribution.assets import cost_allocations, reconciliation, run_costs
from pipelines.budgets.delivery import FAILED, attempt, current_alerts, ledger, plan_deliveries, record, utc_now
from pipelines.budgets.files import load_budgets_with_files
from pipelines.budgets.tables import (
    build_budget_alerts,
    build_budget_variance,
    replace_budget_baselines,
)
from pipelines.ingest.assets import FOCUS_LINE_ITEMS
from pipelines.orchestration.resources import WAREHOUSE_POOL, RunLedgerResource
from pipelines.orchestration.tables import holds_tables
from pipelines.warehouse.connection import transactions
from pipelines.warehouse.sql import read_sql

# Assets of the layer above (pipelines.waste) that the budget tables read, by key: the progress the
# forecast is made from, the events that list a run before it has spend. The as_of of both tables
# comes from the usage lines of focus_line_items.
RUN_EVENTS = dg.AssetKey("run_events")
RUN_PROGRESS = dg.AssetKey("run_progress")


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
    checkpoints, egress)."""
    config = runledger.load_config()
    budgets = load_budgets_with_files(config.budgets_path) if config.budgets_path else []
    with runledger.warehouse(config) as conn:
        for attempt in transactions(conn):
            with attempt:
                rows = replace_budget_baselines(conn, budgets)
    return dg.MaterializeResult(
        metadata={"budgets": dg.MetadataValue.int(len(budgets)), "rows": dg.MetadataValue.int(rows)}
    )


@dg.asset(
    deps=[budget_baselines, cost_allocations, reconciliation, FOCUS_LINE_ITEMS, RUN_EVENTS, RUN_PROGRESS],
    group_name="budgets",
    owners=["team:finops"],
    kinds={"duckdb"},
    metadata=holds_tables("budget_variance"),
    pool=WAREHOUSE_POOL,
)
def budget_variance(runledger: RunLedgerResource) -> dg.MaterializeResult:
    """`budget_variance`: actual (effective) spend against the estimate per budgeted run and cost
    category plus a `total` row: variance, status, forecast at completion (from `run_progress`),
    and for compute the rate and usage variances that add up to the compute variance exactly.
    Rebuilt whole, only after reconciliation passed."""
    config = runledger.load_config()
    with runledger.warehouse(config) as conn:
        for attempt in transactions(conn):
            with attempt:
                rows = build_budget_variance(conn)
        totals = conn.execute(read_sql("marts/budget_variance", "totals")).fetchall()
    return dg.MaterializeResult(
        metadata={
            "rows": dg.MetadataValue.int(rows),
            "totals": dg.MetadataValue.md(
                "| run | estimated | actual | variance | status |\n|---|---:|---:|---:|---|\n"
                + "\n".join(f"| {r} | {e:,.2f} | {a:,.2f} | {v:,.2f} | {s} |" for r, e, a, v, s in totals)
            ),
        }
    )


@dg.asset(
    deps=[budget_baselines, cost_allocations, reconciliation, FOCUS_LINE_ITEMS, RUN_EVENTS],
    group_name="budgets",
    owners=["team:finops"],
    kinds={"duckdb"},
    metadata=holds_tables("budget_alerts"),
    pool=WAREHOUSE_POOL,
)
def budget_alerts(runledger: RunLedgerResource) -> dg.MaterializeResult:
    """`budget_alerts`: the first day each budgeted run's cumulative effective spend reached its
    warning and its over threshold, rebuilt from the whole history every run, only after
    reconciliation passed."""
    config = runledger.load_config()
    with runledger.warehouse(config) as conn:
        for attempt in transactions(conn):
            with attempt:
                rows = build_budget_alerts(conn)
        alerts = conn.execute(read_sql("marts/budget_alerts", "summary")).fetchall()
    return dg.MaterializeResult(
        metadata={
            "rows": dg.MetadataValue.int(rows),
            "alerts": dg.MetadataValue.json(
                [
                    {"training_run": run, "threshold": threshold, "crossed_on": str(day)}
                    for run, threshold, day, *_ in alerts
                ]
            ),
        }
    )


@dg.asset(
    deps=[budget_alerts, run_costs],
    group_name="budgets",
    owners=["team:finops"],
    kinds={"duckdb"},
    metadata=holds_tables("alert_deliveries"),
    pool=WAREHOUSE_POOL,
)
def alert_deliveries(context: dg.AssetExecutionContext, runledger: RunLedgerResource) -> dg.MaterializeResult:
    """`alert_deliveries`: each new alert of `budget_alerts` sent once to every destination of
    `alerts.destinations` that takes its run's owner (Slack-compatible or JSON webhooks, email over
    SMTP), a crossing a restatement took back sent once as resolved, and what failed before tried
    again. A delivery that still fails is recorded and logged as a warning; the step succeeds."""
    config = runledger.load_config()
    settings = config.alerts
    by_name = {destination.name: destination for destination in settings.destinations}
    with runledger.warehouse(config) as conn:
        for transaction in transactions(conn):
            with transaction:
                to_send, superseded = plan_deliveries(
                    current_alerts(conn), ledger(conn), settings.destinations, utc_now()
                )
                record(conn, [*to_send, *superseded])
    done = [attempt(delivery, by_name[delivery.destination], settings) for delivery in to_send]
    with runledger.warehouse(config) as conn:
        for transaction in transactions(conn):
            with transaction:
                record(conn, done)
    failed = [delivery for delivery in done if delivery.status == FAILED]
    for delivery in done:
        what = f"{delivery.alert.event} {delivery.alert.alert_key} to {delivery.destination}"
        if delivery.status == FAILED:
            context.log.warning(
                f"alert {what} not delivered after {delivery.attempts} attempts ({delivery.last_error}); "
                "the next run tries again"
            )
        else:
            context.log.info(f"alert {what} delivered")
    return dg.MaterializeResult(
        metadata={
            "destinations": dg.MetadataValue.int(len(settings.destinations)),
            "delivered": dg.MetadataValue.int(len(done) - len(failed)),
            "failed": dg.MetadataValue.int(len(failed)),
            "superseded": dg.MetadataValue.int(len(superseded)),
            "failures": dg.MetadataValue.json(
                [
                    f"{delivery.destination}: {delivery.alert.event} {delivery.alert.alert_key}: {delivery.last_error}"
                    for delivery in failed
                ]
            ),
        }
    )
