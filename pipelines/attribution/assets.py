"""Attribution assets: run registry, cost_allocations and the summaries and views built on them."""

from decimal import Decimal

import dagster as dg
import duckdb

from pipelines.attribution.allocate import ALLOCATIONS_STEP, allocate_period_if_changed, over_capacity, period_totals
from pipelines.attribution.commitments import build_commitment_utilization
from pipelines.attribution.registry import load_registry, replace_run_registry_if_changed
from pipelines.clusters.assets import cluster_usage
from pipelines.config import RunLedgerConfig
from pipelines.ingest.assets import FOCUS_LINE_ITEMS
from pipelines.orchestration.marts import Check, Column, Format, Mart, Preview, markdown_table
from pipelines.orchestration.partitions import billing_period_of, billing_periods
from pipelines.orchestration.resources import WAREHOUSE_POOL, RunLedgerResource
from pipelines.orchestration.tables import holds_tables
from pipelines.tags.assets import resource_tag_snapshots
from pipelines.warehouse.connection import MACROS, create_view, transactions
from pipelines.warehouse.decimal_text import as_text
from pipelines.warehouse.sql import dict_rows, read_sql
from pipelines.warehouse.step_inputs import concluded_if_changed, step_builds, tables_inputs
from pipelines.warehouse.summaries import RUN_COSTS, UNATTRIBUTED_COSTS, build_summary

CONSERVATION_CHECK = "conservation"
CLUSTER_CAPACITY_CHECK = "cluster_capacity"
RECONCILIATION_CHECK = "zero_differences"
RAW_FOCUS = "_raw_focus_"  # the differences a load commits atomically: never pending
# the tables the reconciliation view reads besides its good loads and the allocations' builds
RECONCILIATION_INPUTS = ("focus_line_items", "cost_allocations")
UNTAGGED_SHARE_CHECK = "untagged_share"
TOP_OFFENDERS = 10
BY_METHOD = (
    Column("allocation_method", "method"),
    Column("allocations", "allocations", Format.COUNT),
    Column("effective_cost", "effective cost", Format.AMOUNT),
)
CONTROL_TOTALS = (
    Column("source_name", "source"),
    Column("billing_period", "period", Format.MONTH),
    Column("currency", "currency"),
    Column("raw_rows", "raw rows", Format.COUNT),
    Column("focus_rows", "focus rows", Format.COUNT),
    Column("derived_rows", "derived rows", Format.COUNT),
    Column("allocated_rows", "allocated rows", Format.COUNT),
    Column("raw_billed_cost", "raw billed", Format.AMOUNT),
    Column("focus_billed_cost", "focus billed", Format.AMOUNT),
    Column("allocated_billed_cost", "allocated billed", Format.AMOUNT),
    Column("allocated_effective_cost", "allocated effective", Format.AMOUNT),
)


@dg.asset(
    group_name="attribution",
    owners=["team:finops"],
    kinds={"duckdb"},
    metadata=holds_tables("run_registry"),
    pool=WAREHOUSE_POOL,
)
def run_registry(runledger: RunLedgerResource) -> dg.MaterializeResult:
    """The run registry (`attribution.runs`) as the `run_registry` table, replaced whole: the
    experiment, dataset version, owner, window and resource globs of each training run; not
    written when it already holds the same runs."""
    config = runledger.load_config()
    runs = load_registry(config.runs_path) if config.runs_path else []
    with runledger.warehouse(config) as conn:
        for attempt in transactions(conn):
            with attempt:
                replaced = replace_run_registry_if_changed(conn, runs)
    return dg.MaterializeResult(
        metadata={"runs": dg.MetadataValue.int(len(runs)), "replaced": dg.MetadataValue.bool(replaced)}
    )


@dg.asset(
    partitions_def=billing_periods,
    deps=[FOCUS_LINE_ITEMS, run_registry, resource_tag_snapshots, cluster_usage],
    group_name="attribution",
    owners=["team:finops"],
    kinds={"duckdb"},
    metadata=holds_tables("cost_allocations", "step_inputs"),
    pool=WAREHOUSE_POOL,
    check_specs=[
        dg.AssetCheckSpec(
            CONSERVATION_CHECK,
            asset="cost_allocations",
            blocking=True,
            description="Per line item the allocation ratios sum to 1 and the allocated costs equal its "
            "BilledCost and EffectiveCost exactly (proven when a period's allocations are written: an unbalanced "
            "line rolls them back); per source and currency the totals match, checked on every run.",
        ),
        dg.AssetCheckSpec(
            CLUSTER_CAPACITY_CHECK,
            asset="cost_allocations",
            description="No shared cluster node's jobs held more GPUs (CPUs on GPU-less nodes) over a billed hour "
            "than the node has; where they did, the cluster step scaled them down to its capacity, and this lists "
            "the node and hour.",
        ),
    ],
)
def cost_allocations(context: dg.AssetExecutionContext, runledger: RunLedgerResource) -> dg.MaterializeResult:
    """Every line item of the billing period attributed to a training run, experiment, dataset
    version and owner — by its own tags, a shared cluster's jobs (the rest of the node its idle
    capacity), the resource tag snapshot valid at its charge time, the run registry or a
    shared-cost rule, in that order — or explicitly `unattributed`, each part
    saying why in allocation_method and allocation_rule. Recomputed only when the period's loads,
    the registry, the tag snapshots or the attribution settings changed (`step_inputs`)."""
    billing_period = billing_period_of(context.partition_key)
    config = runledger.load_config()
    with runledger.warehouse(config) as conn:
        checks = allocate_period_if_changed(
            conn,
            billing_period,
            config.attribution.dimensions,
            config.attribution.shared,
            config.attribution.commitments.active_rules,
            share_idle=config.attribution.idle_capacity.share == "proportional",
        )
        recomputed = checks is not None
        if not recomputed:
            context.log.info(
                f"{billing_period:%Y-%m}: loads, registry, tag snapshots and settings unchanged; allocations kept "
                "(their per-line balance was proven when they were written; totals checked again)"
            )
            checks = period_totals(conn, billing_period)
        method_rows = dict_rows(
            conn.execute(read_sql("attribution/cost_allocations", "period_methods"), {"billing_period": billing_period})
        )
        overloaded = over_capacity(conn, billing_period)
    totals_differ = [
        c
        for c in checks
        if c["focus_billed_cost"] != c["allocated_billed_cost"]
        or c["focus_effective_cost"] != c["allocated_effective_cost"]
    ]
    for row in method_rows:
        context.log.info(
            f"{billing_period:%Y-%m} {row['allocation_method']}: {row['allocations']:,} allocations, "
            f"effective cost {row['effective_cost']:,.2f}"
        )
    return dg.MaterializeResult(
        metadata={
            "rows": dg.MetadataValue.int(sum(c["allocation_rows"] for c in checks)),
            "recomputed": dg.MetadataValue.bool(recomputed),
            "by_method": dg.MetadataValue.md(markdown_table(BY_METHOD, method_rows)),
        },
        check_results=[
            dg.AssetCheckResult(
                check_name=CONSERVATION_CHECK,
                # an unbalanced line raised ConservationError before its allocations were kept
                passed=not totals_differ,
                severity=dg.AssetCheckSeverity.ERROR,
                metadata={
                    "per_line": "checked now" if recomputed else "checked when the allocations were written",
                    "per_source": dg.MetadataValue.json([{k: as_text(v) for k, v in c.items()} for c in checks]),
                },
            ),
            dg.AssetCheckResult(
                check_name=CLUSTER_CAPACITY_CHECK,
                passed=not overloaded,
                severity=dg.AssetCheckSeverity.WARN,
                description=(
                    f"{len(overloaded)} node-hour(s) held beyond capacity, scaled down to it: "
                    + ", ".join(
                        f"{row['cluster']} {row['resource_id']} at {row['charge_start']:%Y-%m-%d %H:%M} "
                        f"({row['load']:.2f}× its {'GPUs' if row['counted'] == 'gpu' else 'CPUs'})"
                        for row in overloaded[:10]
                    )
                    if overloaded
                    else "no node held beyond its capacity"
                ),
            ),
        ],
    )


RUN_COSTS_MART = Mart(
    name=RUN_COSTS,
    group="attribution",
    description="The `run_costs` table: attributed spend per training run, cost category, billing period and "
    "currency, each run named with its registry (else its main) experiment, dataset version and owner. Rebuilt "
    "whole, only when the allocations or the registry changed (`step_inputs`).",
    inputs=(cost_allocations, run_registry),
    build=lambda conn: build_summary(conn, RUN_COSTS),
    previews=(
        Preview(
            "runs",
            ("marts/run_costs", "preview"),
            (
                Column("training_run", "run"),
                Column("currency", "currency"),
                Column("billed_cost", "billed", Format.AMOUNT),
                Column("effective_cost", "effective", Format.AMOUNT),
                Column("gpu_hours", "GPU-hours", Format.AMOUNT),
            ),
        ),
    ),
)
run_costs = RUN_COSTS_MART.asset()

SHARE_BY_PERIOD = Preview(
    "share_by_period",
    ("marts/unattributed_costs", "share"),
    (
        Column("billing_period", "period", Format.MONTH),
        Column("currency", "currency"),
        Column("effective_cost", "effective", Format.AMOUNT),
        Column("unattributed_cost", "unattributed", Format.AMOUNT),
        Column("untagged_cost", "untagged", Format.AMOUNT),
        Column("untagged_share", "share", Format.SHARE_2),
    ),
)
TOP_OFFENDERS_PREVIEW = Preview(
    "top_offenders",
    ("marts/unattributed_costs", "top_offenders"),
    (
        Column("billing_period", "period", Format.MONTH),
        Column("provider", "provider"),
        Column("account", "account"),
        Column("service", "service"),
        Column("resource", "resource"),
        Column("owner", "owner"),
        Column("effective_cost", "effective", Format.AMOUNT, unit="currency"),
        Column("share_of_period", "share", Format.SHARE_2),
    ),
)
NOT_TAGGABLE = Preview(
    "not_taggable",
    ("marts/unattributed_costs", "not_taggable"),
    (
        Column("billing_period", "period", Format.MONTH),
        Column("currency", "currency"),
        Column("spend_kind", "kind"),
        Column("line_items", "line items", Format.COUNT),
        Column("effective_cost", "effective", Format.AMOUNT),
    ),
)


def untagged_share(conn: duckdb.DuckDBPyConnection, config: RunLedgerConfig) -> dg.AssetCheckResult:
    """The untagged_share check: no billing period's untagged share above
    `orchestration.untagged_share_threshold`, with the shares, the largest untagged resources
    (of the periods over it, else of every period) and the spend no tag can move."""
    threshold = Decimal(str(config.orchestration.untagged_share_threshold))
    shares = dict_rows(conn.execute(read_sql(*SHARE_BY_PERIOD.sql)))
    over = [row for row in shares if row["untagged_share"] is not None and row["untagged_share"] > threshold]
    offenders = {
        "billing_periods": [row["billing_period"] for row in over or shares],
        "limit": TOP_OFFENDERS,
    }
    return dg.AssetCheckResult(
        check_name=UNTAGGED_SHARE_CHECK,
        passed=not over,
        severity=dg.AssetCheckSeverity.WARN,
        description=(
            f"untagged share above {threshold:.0%} in "
            + ", ".join(
                f"{row['billing_period']:%Y-%m} {row['currency']} ({row['untagged_share']:.1%})" for row in over
            )
            if over
            else f"untagged share at most {threshold:.0%} in every billing period"
        ),
        metadata={
            "threshold": dg.MetadataValue.float(float(threshold)),
            SHARE_BY_PERIOD.key: dg.MetadataValue.md(markdown_table(SHARE_BY_PERIOD.columns, shares)),
            TOP_OFFENDERS_PREVIEW.key: dg.MetadataValue.md(TOP_OFFENDERS_PREVIEW.render(conn, offenders)),
            NOT_TAGGABLE.key: dg.MetadataValue.md(NOT_TAGGABLE.render(conn)),
        },
    )


UNATTRIBUTED_COSTS_MART = Mart(
    name=UNATTRIBUTED_COSTS,
    group="attribution",
    description="The `unattributed_costs` table: spend with no training run by provider, account, service, "
    "resource, commitment, spend kind and billing period, with its share of the period: the tag-hygiene worklist. "
    "Rebuilt whole, only when the allocations changed (`step_inputs`).",
    inputs=(FOCUS_LINE_ITEMS, cost_allocations),
    build=lambda conn: build_summary(conn, UNATTRIBUTED_COSTS),
    checks=(
        Check(
            UNTAGGED_SHARE_CHECK,
            "In every billing period the untagged spend (spend with no training run that tagging could move: lines "
            "of a resource) stays below `orchestration.untagged_share_threshold` of the period's effective cost. "
            "Commitments, tax, credits, support and charges without a resource are listed apart.",
            untagged_share,
            parameters=lambda config: {"threshold": str(config.orchestration.untagged_share_threshold)},
        ),
    ),
)
unattributed_costs = UNATTRIBUTED_COSTS_MART.asset()


@dg.asset(
    deps=[FOCUS_LINE_ITEMS, cost_allocations],
    group_name="attribution",
    owners=["team:finops"],
    kinds={"duckdb"},
    metadata=holds_tables("reconciliation"),
    pool=WAREHOUSE_POOL,
    check_specs=[
        dg.AssetCheckSpec(
            RECONCILIATION_CHECK,
            asset="reconciliation",
            blocking=True,
            description="Raw export = focus_line_items = cost_allocations, per source, period and currency.",
        )
    ],
)
def reconciliation(runledger: RunLedgerResource) -> dg.MaterializeResult:
    """The `reconciliation` view: conservation per source, billing period and currency, the raw
    export's control totals (`loads`), focus_line_items and cost_allocations side by side, and
    their differences (all exactly 0). Its rows are read again only when the loads, the line items
    or the allocations changed since the last clean reconciliation (`step_inputs`); else that one
    is shown again."""
    config = runledger.load_config()
    with runledger.warehouse(config) as conn:
        create_view(conn, "marts/reconciliation")
        for attempt in transactions(conn):
            with attempt:
                inputs = tables_inputs(
                    conn,
                    "reconciliation",
                    RECONCILIATION_INPUTS,
                    ("marts/reconciliation", MACROS),
                    {
                        "good_loads": conn.execute(read_sql("ops/step_inputs", "good_loads")).fetchone()[0],
                        "allocation_builds": step_builds(conn, ALLOCATIONS_STEP),
                    },
                )
                outcome, _ = concluded_if_changed(conn, inputs, lambda: _reconcile(conn))
    return _reconciliation_result(dg.deserialize_value(outcome, as_type=dict))


def _reconcile(conn: duckdb.DuckDBPyConnection) -> tuple[str, bool]:
    """Reads the reconciliation: its row count, control totals, failures and pending periods (as
    text), kept only when clean: a difference or a pending period is read again the next night."""
    rows = dict_rows(conn.execute(read_sql("marts/reconciliation", "rows")))
    failures = [
        row
        for row in rows
        if any(value != 0 for key, value in row.items() if key.endswith("_diff") and RAW_FOCUS in key)
        or (not row["allocation_pending"] and any(value != 0 for key, value in row.items() if key.endswith("_diff")))
    ]
    pending = [f"{row['source_name']} {row['billing_period']:%Y-%m}" for row in rows if row["allocation_pending"]]
    outcome = {
        "rows": len(rows),
        "control_totals": markdown_table(CONTROL_TOTALS, rows),
        "failures": [{k: as_text(v) for k, v in f.items()} for f in failures],
        "pending": pending,
    }
    return dg.serialize_value(outcome), not failures and not pending


def _reconciliation_result(outcome: dict) -> dg.MaterializeResult:
    failures, pending = outcome["failures"], outcome["pending"]
    return dg.MaterializeResult(
        metadata={
            "rows": dg.MetadataValue.int(outcome["rows"]),
            "control_totals": dg.MetadataValue.md(outcome["control_totals"]),
        },
        check_results=[
            dg.AssetCheckResult(
                check_name=RECONCILIATION_CHECK,
                passed=not failures,
                severity=dg.AssetCheckSeverity.ERROR,
                description=(
                    f"allocations pending (another run between loading and attributing): {', '.join(pending)}"
                    if pending and not failures
                    else None
                ),
                metadata={
                    "failures": dg.MetadataValue.json(failures),
                    "allocation_pending": dg.MetadataValue.json(pending),
                },
            )
        ],
    )


RUN_COSTS_FULLY_LOADED = Mart(
    name="run_costs_fully_loaded",
    group="attribution",
    description="`run_costs_fully_loaded`: what each training run cost all in, per billing period and currency: "
    "its direct cost plus its exact share (largest remainder, in proportion to direct cost) of the spend no run "
    "owns, kind by kind: idle capacity of the clusters it ran on, unused commitments, tax, support and every other "
    "unattributed part. Over all runs it sums exactly to the period's effective cost. An analysis: "
    "`cost_allocations` is unchanged. Rebuilt whole, only after reconciliation passed, and only when the "
    "allocations changed.",
    inputs=(cost_allocations, unattributed_costs),
    after=(reconciliation,),
    build=lambda conn: conn.execute(read_sql("marts/run_costs_fully_loaded", "insert")),
    previews=(
        Preview(
            "runs",
            ("marts/run_costs_fully_loaded", "preview"),
            (
                Column("billing_period", "period", Format.MONTH),
                Column("training_run", "run"),
                Column("direct_cost", "direct", Format.AMOUNT, unit="currency"),
                Column("fully_loaded_cost", "fully loaded", Format.AMOUNT, unit="currency"),
            ),
        ),
    ),
)
run_costs_fully_loaded = RUN_COSTS_FULLY_LOADED.asset()

COMMITMENT_UTILIZATION = Mart(
    name="commitment_utilization",
    group="attribution",
    description="`commitment_utilization`: every Savings Plan, reservation and committed use discount per billing "
    "period — its amortized cost, the part covered usage used and the unused part, how much of that unused part "
    "runs carry (`attribution.commitments`), utilization and coverage. Rebuilt whole, only after reconciliation "
    "passed, and only when the line items or allocations changed.",
    inputs=(FOCUS_LINE_ITEMS, cost_allocations),
    after=(reconciliation,),
    build=build_commitment_utilization,
    previews=(
        Preview(
            "by_commitment",
            ("marts/commitment_utilization", "summary"),
            (
                Column("billing_period", "period", Format.MONTH),
                Column("commitment_type", "type"),
                Column("commitment_id", "commitment"),
                Column("currency", "currency"),
                Column("committed_cost", "committed", Format.AMOUNT),
                Column("unused_cost", "unused", Format.AMOUNT),
                Column("unused_charged_cost", "charged to runs", Format.AMOUNT),
                Column("utilization", "utilization", Format.SHARE),
                Column("coverage", "coverage", Format.SHARE),
            ),
        ),
    ),
)
commitment_utilization = COMMITMENT_UTILIZATION.asset()
