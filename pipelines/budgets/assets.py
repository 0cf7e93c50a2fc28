"""Budget assets: the variance of actual spend against the baselines, its causes, the alerts on
each threshold and their deliveries."""

import dagster as dg
import duckdb

from pipelines.attribution.assets import cost_allocations, reconciliation, run_costs
from pipelines.budgets.causes import build_variance_causes
from pipelines.budgets.delivery import FAILED, attempt_all, current_alerts, ledger, plan_deliveries, record, utc_now
from pipelines.budgets.tables import (
    ALERT_KINDS,
    ALERTS_SQL,
    alert_parameters,
    build_budget_alerts,
    build_budget_variance,
    build_group_budget_variance,
    elastic_categories,
)
from pipelines.config import RunLedgerConfig
from pipelines.ingest.assets import FOCUS_LINE_ITEMS
from pipelines.orchestration.marts import Check, Column, Format, Mart, Preview, reads
from pipelines.orchestration.resources import WAREHOUSE_POOL, RunLedgerResource
from pipelines.orchestration.tables import holds_tables
from pipelines.plans.assets import budget_baselines
from pipelines.progress.assets import run_events, run_progress
from pipelines.telemetry.assets import run_utilization
from pipelines.warehouse.connection import MACROS, transactions
from pipelines.warehouse.sql import dict_rows, read_sql
from pipelines.waste.assets import waste

BUDGET_VARIANCE = Mart(
    name="budget_variance",
    group="budgets",
    description="`budget_variance`: actual (effective) spend against the estimate per budgeted run and cost "
    "category plus a `total` row: variance, status, forecast at completion (from `run_progress`), and for compute "
    "the rate and usage variances that add up to the compute variance exactly. Rebuilt whole, only after "
    "reconciliation passed, and only when a table it reads changed.",
    # run_events lists a run before it has spend; as_of comes from the usage lines of focus_line_items
    inputs=(budget_baselines, cost_allocations, FOCUS_LINE_ITEMS, run_events, run_progress),
    after=(reconciliation,),
    build=build_budget_variance,
    parameters=lambda _: {"elastic_categories": elastic_categories()},
    previews=(
        Preview(
            "totals",
            ("marts/budget_variance", "totals"),
            (
                Column("training_run", "run"),
                Column("estimated_cost", "estimated", Format.AMOUNT),
                Column("actual_cost", "actual", Format.AMOUNT),
                Column("variance", "variance", Format.AMOUNT),
                Column("status", "status"),
            ),
        ),
    ),
)
budget_variance = BUDGET_VARIANCE.asset()

GROUP_BUDGET_VARIANCE = Mart(
    name="group_budget_variance",
    group="budgets",
    description="`group_budget_variance`: each group budget (a budget file with `scope:`: an experiment, owner, "
    "dataset version, cluster or custom dimension) against the actual (effective) spend of every allocation "
    "carrying its value, per billing period (monthly) or window, per budgeted category plus a `total` row: "
    "variance, status and the forecast at the period's end. Rebuilt whole, only after reconciliation passed, and "
    "only when a table it reads changed.",
    # as_of comes from the usage lines of focus_line_items
    inputs=(reads(budget_baselines, "group_budgets"), cost_allocations, FOCUS_LINE_ITEMS),
    after=(reconciliation,),
    build=build_group_budget_variance,
    previews=(
        Preview(
            "totals",
            ("marts/group_budget_variance", "totals"),
            (
                Column("scope_kind", "dimension"),
                Column("scope", "scope"),
                Column("period", "period"),
                Column("estimated_cost", "budget", Format.AMOUNT),
                Column("actual_cost", "actual", Format.AMOUNT),
                Column("variance", "variance", Format.AMOUNT),
                Column("status", "status"),
            ),
        ),
    ),
)
group_budget_variance = GROUP_BUDGET_VARIANCE.asset()

THRESHOLD_CHECKS = {
    "gpu_hours": "GPU-hours of each budgeted run stay below the warning share of its estimated GPU-hours.",
    "wall_clock": "Each budgeted run's wall-clock since its first start stays below the warning share of the "
    "plan (the model's wall_hours).",
    "storage": "Each budgeted run's storage spend stays below the warning share of its storage estimate.",
    "daily_spend_anomaly": "No day of a budgeted run's usage spend, of a cost category's usage spend over the "
    "organisation or of an account and service's unattributed usage spend reaches the warning multiple of its "
    "trailing median daily spend.",
    "idle_gpus": "No GPU instance is charged for more than thresholds.idle_gpus.warning_hours in a row with no run.",
    "low_gpu_utilization": "No budgeted run's hourly mean GPU utilization stays below the warning level (0.5) for "
    "thresholds.low_gpu_utilization.hours consecutive hours.",
    "data_loading_share": "No budgeted run's steps spend more than the warning share (0.15) of their time waiting "
    "for data for thresholds.data_loading_share.hours consecutive hours.",
    "group_budget": "No group budget's scope (experiment, owner, ...) spends the warning share of its amount in a "
    "period.",
}
"""The asset checks of budget_alerts, one per threshold kind besides cost (named `<kind>_threshold`):
warning crossings fail at WARN, over crossings at ERROR; none blocks the run."""


def threshold_check_result(kind: str, crossings: list[dict[str, object]]) -> dg.AssetCheckResult:
    """The check of one threshold kind: passed without crossings, else WARN, or ERROR once a level
    `over` was reached.

    Args:
        kind: a kind of THRESHOLD_CHECKS.
        crossings: the `kind_crossings` rows of budget_alerts (kind, threshold, detail) by name.
    """
    details = [(row["threshold"], row["detail"]) for row in crossings if row["kind"] == kind]
    over = any(threshold == "over" for threshold, _ in details)
    return dg.AssetCheckResult(
        check_name=f"{kind}_threshold",
        passed=not details,
        severity=dg.AssetCheckSeverity.ERROR if over else dg.AssetCheckSeverity.WARN,
        description="; ".join(f"{threshold}: {detail}" for threshold, detail in details)
        or f"no {kind} threshold crossed",
        metadata={"crossings": dg.MetadataValue.int(len(details))},
    )


def _threshold_check(kind: str, description: str) -> Check:
    def result(conn: duckdb.DuckDBPyConnection, _: RunLedgerConfig) -> dg.AssetCheckResult:
        return threshold_check_result(kind, dict_rows(conn.execute(read_sql("marts/budget_alerts", "kind_crossings"))))

    return Check(f"{kind}_threshold", description, result)


def _alerts(conn: duckdb.DuckDBPyConnection) -> dict[str, dg.MetadataValue]:
    return {
        "alerts": dg.MetadataValue.json(
            [
                {
                    "training_run": row["training_run"],
                    "threshold": row["threshold"],
                    "crossed_on": str(row["crossed_on"]),
                }
                for row in dict_rows(conn.execute(read_sql("marts/budget_alerts", "summary")))
            ]
        )
    }


BUDGET_ALERTS = Mart(
    name="budget_alerts",
    group="budgets",
    description="`budget_alerts`: the first day each budgeted run's cumulative effective spend, GPU-hours, "
    "wall-clock and storage spend reached its warning and its over threshold, the days far above a run's trailing "
    "median (and beyond runs, a cost category's or an account and service's unattributed spend), GPU instances idle "
    "with no run, stretches of low GPU utilization or of steps waiting for data, and the first day each group "
    "budget's scope spent its warning and over share of a period's amount; rebuilt from the whole history every "
    "run, only after reconciliation passed, and only when a table it reads or a threshold setting changed.",
    inputs=(
        reads(budget_baselines, "budget_baselines", "group_budgets"),
        cost_allocations,
        FOCUS_LINE_ITEMS,
        run_events,
        run_utilization,
    ),
    after=(reconciliation,),
    build=build_budget_alerts,
    sql=(ALERTS_SQL, *(f"{ALERTS_SQL}/{kind}" for kind in ALERT_KINDS), MACROS),
    settings=lambda config: config.thresholds,
    parameters=alert_parameters,
    metadata=_alerts,
    checks=tuple(_threshold_check(kind, description) for kind, description in THRESHOLD_CHECKS.items()),
)
budget_alerts = BUDGET_ALERTS.asset()
THRESHOLD_CHECK_KEYS = frozenset(dg.AssetCheckKey(budget_alerts.key, check.name) for check in BUDGET_ALERTS.checks)
"""Their keys: `runledger run` prints their failures as alerts and never fails a run on them."""

VARIANCE_CAUSES = Mart(
    name="variance_causes",
    group="waste",  # its group in the Dagster UI since before it moved to the budgets layer
    description="`variance_causes`: why each budgeted run is over or under — its variance split into compute rate "
    "(pricing mix, price), compute usage (idle after the end, recompute after failures, restart downtime, scope, "
    "throughput) and the other categories, each level summing exactly to its parent, each cause with its GPU-hours "
    "and evidence. Rebuilt whole after the budget variance, the waste analysis and the run progress, only when a "
    "table it reads changed.",
    inputs=(
        budget_baselines,
        budget_variance,
        reads(run_progress, "run_pricing", "run_progress"),
        waste,
        run_utilization,
    ),
    after=(reconciliation,),
    build=build_variance_causes,
)
variance_causes = VARIANCE_CAUSES.asset()


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
    with runledger.warehouse(config) as conn:
        for transaction in transactions(conn):
            with transaction:
                to_send, superseded = plan_deliveries(
                    current_alerts(conn), ledger(conn), settings.destinations, utc_now()
                )
                record(conn, [*to_send, *superseded])
    done = attempt_all(to_send, settings)
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
