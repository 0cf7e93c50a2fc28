"""Budget assets: pre-training baselines and the variance of actual spend against them."""

import dagster as dg

from pipelines.attribution.assets import cost_allocations, reconciliation, run_costs
from pipelines.budgets.delivery import FAILED, attempt, current_alerts, ledger, plan_deliveries, record, utc_now
from pipelines.budgets.files import load_budgets_with_files
from pipelines.budgets.tables import (
    BUDGET_ALERTS_INPUTS,
    BUDGET_VARIANCE_INPUTS,
    build_budget_alerts_if_changed,
    build_budget_variance_if_changed,
    replace_budget_baselines_if_changed,
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


@dg.asset(
    deps=[budget_baselines, cost_allocations, reconciliation, FOCUS_LINE_ITEMS, RUN_EVENTS, RUN_PROGRESS],
    group_name="budgets",
    owners=["team:finops"],
    kinds={"duckdb"},
    metadata=holds_tables("budget_variance", inputs=BUDGET_VARIANCE_INPUTS),
    pool=WAREHOUSE_POOL,
)
def budget_variance(runledger: RunLedgerResource) -> dg.MaterializeResult:
    """`budget_variance`: actual (effective) spend against the estimate per budgeted run and cost
    category plus a `total` row: variance, status, forecast at completion (from `run_progress`),
    and for compute the rate and usage variances that add up to the compute variance exactly.
    Rebuilt whole, only after reconciliation passed, and only when a table it reads changed."""
    config = runledger.load_config()
    with runledger.warehouse(config) as conn:
        for attempt in transactions(conn):
            with attempt:
                rebuilt = build_budget_variance_if_changed(conn)
        (rows,) = conn.execute(read_sql("marts/budget_variance", "count")).fetchone()
        totals = conn.execute(read_sql("marts/budget_variance", "totals")).fetchall()
    return dg.MaterializeResult(
        metadata={
            "rows": dg.MetadataValue.int(rows),
            "rebuilt": dg.MetadataValue.bool(rebuilt),
            "totals": dg.MetadataValue.md(
                "| run | estimated | actual | variance | status |\n|---|---:|---:|---:|---|\n"
                + "\n".join(f"| {r} | {e:,.2f} | {a:,.2f} | {v:,.2f} | {s} |" for r, e, a, v, s in totals)
            ),
        }
    )


THRESHOLD_CHECKS = {
    "gpu_hours": "GPU-hours of each budgeted run stay below the warning share of its estimated GPU-hours.",
    "wall_clock": "Each budgeted run's wall-clock since its first start stays below the warning share of the "
    "plan (the model's wall_hours).",
    "storage": "Each budgeted run's storage spend stays below the warning share of its storage estimate.",
    "daily_spend_anomaly": "No day of a budgeted run's usage spend reaches the warning multiple of its trailing "
    "median daily spend.",
    "idle_gpus": "No GPU instance is charged for more than thresholds.idle_gpus.warning_hours in a row with no run.",
}
"""The asset checks of budget_alerts, one per threshold kind besides cost (named `<kind>_threshold`):
warning crossings fail at WARN, over crossings at ERROR; none blocks the run."""
THRESHOLD_CHECK_KEYS = frozenset(
    dg.AssetCheckKey(dg.AssetKey("budget_alerts"), f"{kind}_threshold") for kind in THRESHOLD_CHECKS
)
"""Their keys: `runledger run` prints their failures as alerts and never fails a run on them."""


@dg.asset(
    deps=[budget_baselines, cost_allocations, reconciliation, FOCUS_LINE_ITEMS, RUN_EVENTS],
    group_name="budgets",
    owners=["team:finops"],
    kinds={"duckdb"},
    metadata=holds_tables("budget_alerts", inputs=BUDGET_ALERTS_INPUTS),
    pool=WAREHOUSE_POOL,
    check_specs=[
        dg.AssetCheckSpec(f"{kind}_threshold", asset="budget_alerts", description=description)
        for kind, description in THRESHOLD_CHECKS.items()
    ],
)
def budget_alerts(runledger: RunLedgerResource) -> dg.MaterializeResult:
    """`budget_alerts`: the first day each budgeted run's cumulative effective spend, GPU-hours,
    wall-clock and storage spend reached its warning and its over threshold, the days far above a
    run's trailing median, and GPU instances idle with no run; rebuilt from the whole history every
    run, only after reconciliation passed, and only when a table it reads or a threshold setting
    changed."""
    config = runledger.load_config()
    with runledger.warehouse(config) as conn:
        for attempt in transactions(conn):
            with attempt:
                rebuilt = build_budget_alerts_if_changed(conn, config.thresholds)
        (rows,) = conn.execute(read_sql("marts/budget_alerts", "count")).fetchone()
        alerts = conn.execute(read_sql("marts/budget_alerts", "summary")).fetchall()
        crossings = conn.execute(read_sql("marts/budget_alerts", "kind_crossings")).fetchall()
    return dg.MaterializeResult(
        metadata={
            "rows": dg.MetadataValue.int(rows),
            "rebuilt": dg.MetadataValue.bool(rebuilt),
            "alerts": dg.MetadataValue.json(
                [
                    {"training_run": run, "threshold": threshold, "crossed_on": str(day)}
                    for run, threshold, day, *_ in alerts
                ]
            ),
        },
        check_results=[threshold_check_result(kind, crossings) for kind in THRESHOLD_CHECKS],
    )


def threshold_check_result(kind: str, crossings: list[tuple]) -> dg.AssetCheckResult:
    """The check of one threshold kind: passed without crossings, else WARN, or ERROR once a level
    `over` was reached.

    Args:
        kind: a kind of THRESHOLD_CHECKS.
        crossings: the `kind_crossings` rows of budget_alerts (kind, threshold, detail).
    """
    details = [(threshold, detail) for row_kind, threshold, detail in crossings if row_kind == kind]
    over = any(threshold == "over" for threshold, _ in details)
    return dg.AssetCheckResult(
        check_name=f"{kind}_threshold",
        passed=not details,
        severity=dg.AssetCheckSeverity.ERROR if over else dg.AssetCheckSeverity.WARN,
        description="; ".join(f"{threshold}: {detail}" for threshold, detail in details)
        or f"no {kind} threshold crossed",
        metadata={"crossings": dg.MetadataValue.int(len(details))},
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
