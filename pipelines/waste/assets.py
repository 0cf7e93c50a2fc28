"""Waste assets: the run event log and the waste analysis of attributed spend."""

import dagster as dg

from pipelines.attribution.assets import cost_allocations, reconciliation, run_costs, run_registry
from pipelines.budgets.assets import budget_baselines, budget_variance
from pipelines.ingest.assets import FOCUS_LINE_ITEMS
from pipelines.orchestration.resources import WAREHOUSE_POOL, RunLedgerResource
from pipelines.orchestration.tables import holds_tables
from pipelines.warehouse.connection import transactions
from pipelines.warehouse.sql import read_sql
from pipelines.waste.causes import VARIANCE_CAUSES_INPUTS, build_variance_causes_if_changed
from pipelines.waste.events import read_source_events, replace_run_events_if_changed
from pipelines.waste.progress import RUN_PROGRESS_INPUTS, build_run_progress_if_changed
from pipelines.waste.provisional import PROVISIONAL_SPEND_INPUTS, build_provisional_spend_if_changed
from pipelines.waste.tables import build_waste_if_changed


@dg.asset(
    group_name="waste",
    owners=["team:finops"],
    kinds={"duckdb"},
    metadata=holds_tables("run_events"),
    pool=WAREHOUSE_POOL,
)
def run_events(context: dg.AssetExecutionContext, runledger: RunLedgerResource) -> dg.MaterializeResult:
    """Training-run events (start, checkpoint, failure, resume, end) in `run_events`, from every
    `run_events` source — JSON-lines files or MLflow runs — validated strictly and replaced in
    one transaction: a bad line fails the run naming its file and line, and leaves the previous
    events in place; not written when it already holds the same events."""
    config = runledger.load_config()
    events_by_source = {source.name: read_source_events(config, source) for source in config.run_events_sources}
    with runledger.warehouse(config) as conn:
        replaced = replace_run_events_if_changed(conn, events_by_source)
        summary = conn.execute(read_sql("inputs/run_events", "summary")).fetchall()
    for source_name, events in events_by_source.items():
        context.log.info(f"{source_name}: {len(events):,} events")
    return dg.MaterializeResult(
        metadata={
            "events": dg.MetadataValue.int(sum(len(events) for events in events_by_source.values())),
            "replaced": dg.MetadataValue.bool(replaced),
            "by_kind": dg.MetadataValue.md(
                "| source | event | events | runs |\n|---|---|---:|---:|\n"
                + "\n".join(f"| {s} | {e} | {n:,} | {r:,} |" for s, e, n, r in summary)
            ),
        }
    )


@dg.asset(
    deps=[FOCUS_LINE_ITEMS, cost_allocations, reconciliation, run_costs, run_registry, budget_baselines, run_events],
    group_name="waste",
    owners=["team:finops"],
    kinds={"duckdb"},
    metadata=holds_tables("waste", "waste_by_run"),
    pool=WAREHOUSE_POOL,
)
def waste(runledger: RunLedgerResource) -> dg.MaterializeResult:
    """`waste` (and its `waste_by_run` view): what each run's attributed spend bought no training
    with, per item, kind and cost category — idle resources after the run's end, recompute after
    failures, checkpoints kept beyond the budget, inter-region transfer, repeated experiments and
    monitoring beyond its estimate — each row saying its method. An analysis of attributed spend:
    cost_allocations and run_costs are read, never changed, and a run's waste never exceeds its
    attributed cost. Rebuilt only after reconciliation passed, and only when its inputs changed."""
    config = runledger.load_config()
    with runledger.warehouse(config) as conn:
        for attempt in transactions(conn):
            with attempt:
                rebuilt = build_waste_if_changed(conn, config.waste)
        (rows,) = conn.execute(read_sql("marts/waste", "count")).fetchone()
        per_run = conn.execute(read_sql("marts/waste", "summary")).fetchall()
    return dg.MaterializeResult(
        metadata={
            "rows": dg.MetadataValue.int(rows),
            "rebuilt": dg.MetadataValue.bool(rebuilt),
            "by_run": dg.MetadataValue.md(
                "| run | owner | attributed | waste | share |\n|---|---|---:|---:|---:|\n"
                + "\n".join(
                    f"| {run} | {owner or ''} | {cost:,.2f} | {waste_cost:,.2f} | "
                    f"{'' if share is None else f'{share:.1%}'} |"
                    for run, owner, cost, waste_cost, share in per_run
                )
            ),
        }
    )


@dg.asset(
    deps=[FOCUS_LINE_ITEMS, cost_allocations, reconciliation, budget_baselines, run_events],
    group_name="waste",
    owners=["team:finops"],
    kinds={"duckdb"},
    metadata=holds_tables("run_progress", "run_pricing", inputs=RUN_PROGRESS_INPUTS),
    pool=WAREHOUSE_POOL,
)
def run_progress(runledger: RunLedgerResource) -> dg.MaterializeResult:
    """`run_progress`: each run's training progress from its events — tokens trained, wall-clock,
    productive and down time, step time, throughput, effective MFU of the tokens trained — and its
    cost per 1e9 tokens against the estimate; and `run_pricing`: its GPU-hours by pricing type
    (on demand, Savings Plan, reservation, committed use, spot) with their cost per GPU-hour and
    share. Rebuilt whole, only after reconciliation passed, and only when a table they read changed."""
    config = runledger.load_config()
    with runledger.warehouse(config) as conn:
        for attempt in transactions(conn):
            with attempt:
                rebuilt = build_run_progress_if_changed(conn)
        (rows,) = conn.execute(read_sql("marts/run_progress", "count")).fetchone()
        summary = conn.execute(read_sql("marts/run_progress", "summary")).fetchall()
    return dg.MaterializeResult(
        metadata={
            "rows": dg.MetadataValue.int(rows),
            "rebuilt": dg.MetadataValue.bool(rebuilt),
            "by_run": dg.MetadataValue.md(
                "| run | tokens trained | wall-clock h | downtime h | per 1e9 tokens | estimated |\n"
                "|---|---:|---:|---:|---:|---:|\n"
                + "\n".join(
                    f"| {run} | {'' if tokens is None else f'{tokens:,}'} | {wall:,.2f} | {down:,.2f} | "
                    f"{'' if cost is None else f'{cost:,.2f}'} | {'' if estimate is None else f'{estimate:,.2f}'} |"
                    for run, tokens, wall, down, cost, estimate in summary
                )
            ),
        }
    )


@dg.asset(
    deps=[reconciliation, budget_baselines, budget_variance, waste, run_progress],
    group_name="waste",
    owners=["team:finops"],
    kinds={"duckdb"},
    metadata=holds_tables("variance_causes", inputs=VARIANCE_CAUSES_INPUTS),
    pool=WAREHOUSE_POOL,
)
def variance_causes(runledger: RunLedgerResource) -> dg.MaterializeResult:
    """`variance_causes`: why each budgeted run is over or under — its variance split into compute
    rate (pricing mix, price), compute usage (idle after the end, recompute after failures,
    restart downtime, scope, throughput) and the other categories, each level summing exactly to
    its parent, each cause with its GPU-hours and evidence. Rebuilt whole after the budget
    variance, the waste analysis and the run progress, only when a table it reads changed."""
    config = runledger.load_config()
    with runledger.warehouse(config) as conn:
        for attempt in transactions(conn):
            with attempt:
                rebuilt = build_variance_causes_if_changed(conn)
        (rows,) = conn.execute(read_sql("marts/variance_causes", "count")).fetchone()
    return dg.MaterializeResult(
        metadata={"rows": dg.MetadataValue.int(rows), "rebuilt": dg.MetadataValue.bool(rebuilt)}
    )


@dg.asset(
    deps=[cost_allocations, reconciliation, run_events],
    group_name="waste",
    owners=["team:finops"],
    kinds={"duckdb"},
    metadata=holds_tables("provisional_spend", inputs=PROVISIONAL_SPEND_INPUTS),
    pool=WAREHOUSE_POOL,
)
def provisional_spend(runledger: RunLedgerResource) -> dg.MaterializeResult:
    """`provisional_spend`: each run's spend since its newest billed hour, estimated from its events
    (GPU-hours trained since, at its observed cost per GPU-hour) while the bill lags, and the
    estimates the bill has covered since, with their error. Only after reconciliation passed, and
    only when the allocations or the events changed."""
    config = runledger.load_config()
    with runledger.warehouse(config) as conn:
        for attempt in transactions(conn):
            with attempt:
                rebuilt = build_provisional_spend_if_changed(conn)
        (rows,) = conn.execute(read_sql("marts/provisional_spend", "count")).fetchone()
        ledger = conn.execute(read_sql("marts/provisional_spend", "summary")).fetchall()
    return dg.MaterializeResult(
        metadata={
            "rows": dg.MetadataValue.int(rows),
            "rebuilt": dg.MetadataValue.bool(rebuilt),
            "ledger": dg.MetadataValue.md(
                "| run | status | billed through | estimated through | estimated | billed | error |\n"
                "|---|---|---|---|---:|---:|---:|\n"
                + "\n".join(
                    f"| {run} | {status} | {start:%Y-%m-%d %H:%M} | {end:%Y-%m-%d %H:%M} | {estimated:,.2f} | "
                    f"{'' if billed is None else f'{billed:,.2f}'} | {'' if error is None else f'{error:,.2f}'} |"
                    for run, status, start, end, _, estimated, billed, error, *_ in ledger
                )
            ),
        }
    )
