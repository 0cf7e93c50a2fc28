"""Progress assets: the run event log, each run's training progress and unit economics, and its
spend the bill does not show yet."""

import dagster as dg

from pipelines.attribution.assets import cost_allocations, reconciliation
from pipelines.ingest.assets import FOCUS_LINE_ITEMS
from pipelines.orchestration.marts import Column, Format, Mart, Preview
from pipelines.orchestration.resources import WAREHOUSE_POOL, RunLedgerResource
from pipelines.orchestration.tables import holds_tables
from pipelines.plans.assets import budget_baselines
from pipelines.progress.events import read_source_events, replace_run_events_if_changed
from pipelines.progress.progress import build_run_progress
from pipelines.progress.provisional import build_provisional_spend
from pipelines.warehouse.connection import MACROS

# The Dagster group these assets kept when they moved out of pipelines.waste (asset groups are what
# users select and see in the UI).
GROUP = "waste"
RUN_EVENTS_BY_KIND = Preview(
    "by_kind",
    ("inputs/run_events", "summary"),
    (
        Column("source_name", "source"),
        Column("event", "event"),
        Column("events", "events", Format.COUNT),
        Column("training_runs", "runs", Format.COUNT),
    ),
)


@dg.asset(
    group_name=GROUP,
    owners=["team:finops"],
    kinds={"duckdb"},
    metadata=holds_tables("run_events"),
    pool=WAREHOUSE_POOL,
)
def run_events(context: dg.AssetExecutionContext, runledger: RunLedgerResource) -> dg.MaterializeResult:
    """Training-run events (start, checkpoint, failure, resume, end, and metrics: step timings) in
    `run_events`, from every `run_events` source — JSON-lines files or MLflow runs — validated
    strictly and replaced in one transaction: a bad line fails the run naming its file and line,
    and leaves the previous events in place; not written when it already holds the same events."""
    config = runledger.load_config()
    events_by_source = {source.name: read_source_events(config, source) for source in config.run_events_sources}
    with runledger.warehouse(config) as conn:
        replaced = replace_run_events_if_changed(conn, events_by_source)
        by_kind = RUN_EVENTS_BY_KIND.render(conn)
    for source_name, events in events_by_source.items():
        context.log.info(f"{source_name}: {len(events):,} events")
    return dg.MaterializeResult(
        metadata={
            "events": dg.MetadataValue.int(sum(len(events) for events in events_by_source.values())),
            "replaced": dg.MetadataValue.bool(replaced),
            "by_kind": dg.MetadataValue.md(by_kind),
        }
    )


RUN_PROGRESS = Mart(
    name="run_progress",
    group=GROUP,
    description="`run_progress`: each run's training progress from its events — tokens trained, wall-clock, "
    "productive and down time, step time, throughput, effective MFU of the tokens trained — and its cost per 1e9 "
    "tokens against the estimate; and `run_pricing`: its GPU-hours by pricing type (on demand, Savings Plan, "
    "reservation, committed use, spot) with their cost per GPU-hour and share. Rebuilt whole, only after "
    "reconciliation passed, and only when a table they read changed.",
    inputs=(FOCUS_LINE_ITEMS, cost_allocations, budget_baselines, run_events),
    after=(reconciliation,),
    also_writes=("run_pricing",),
    sql=("marts/run_progress", "marts/run_pricing", MACROS),
    build=build_run_progress,
    previews=(
        Preview(
            "by_run",
            ("marts/run_progress", "summary"),
            (
                Column("training_run", "run"),
                Column("tokens_trained", "tokens trained", Format.COUNT),
                Column("wall_clock_hours", "wall-clock h", Format.AMOUNT),
                Column("downtime_hours", "downtime h", Format.AMOUNT),
                Column("cost_per_1e9_tokens", "per 1e9 tokens", Format.AMOUNT),
                Column("estimated_cost_per_1e9_tokens", "estimated", Format.AMOUNT),
            ),
        ),
    ),
)
run_progress = RUN_PROGRESS.asset()

PROVISIONAL_SPEND = Mart(
    name="provisional_spend",
    group=GROUP,
    description="`provisional_spend`: each run's spend since its newest billed hour, estimated from its events "
    "(GPU-hours trained since, at its observed cost per GPU-hour) while the bill lags, and the estimates the bill "
    "has covered since, with their error. Only after reconciliation passed, and only when the allocations or the "
    "events changed.",
    inputs=(cost_allocations, run_events),
    after=(reconciliation,),
    build=build_provisional_spend,
    previews=(
        Preview(
            "ledger",
            ("marts/provisional_spend", "summary"),
            (
                Column("training_run", "run"),
                Column("status", "status"),
                Column("billed_through", "billed through", Format.MINUTE),
                Column("estimated_through", "estimated through", Format.MINUTE),
                Column("estimated_cost", "estimated", Format.AMOUNT),
                Column("billed_cost", "billed", Format.AMOUNT),
                Column("error", "error", Format.AMOUNT),
            ),
        ),
    ),
)
provisional_spend = PROVISIONAL_SPEND.asset()
