"""Attribution assets: run registry, cost_allocations and the summaries and views built on them."""

from decimal import Decimal

import dagster as dg

from pipelines.attribution.allocate import allocate_period_if_changed, period_totals
from pipelines.attribution.commitments import COMMITMENT_UTILIZATION_INPUTS, build_commitment_utilization_if_changed
from pipelines.attribution.registry import load_registry, replace_run_registry_if_changed
from pipelines.attribution.summaries import SUMMARY_INPUTS, build_summary_if_changed
from pipelines.ingest.assets import FOCUS_LINE_ITEMS
from pipelines.orchestration.partitions import billing_period_of, billing_periods
from pipelines.orchestration.resources import WAREHOUSE_POOL, RunLedgerResource
from pipelines.orchestration.tables import holds_tables
from pipelines.tags.assets import resource_tag_snapshots
from pipelines.warehouse.connection import create_view, transactions
from pipelines.warehouse.decimal_text import as_text
from pipelines.warehouse.sql import read_sql
from pipelines.warehouse.summaries import RUN_COSTS, UNATTRIBUTED_COSTS

CONSERVATION_CHECK = "conservation"
RECONCILIATION_CHECK = "zero_differences"
RAW_FOCUS = "_raw_focus_"  # the differences a load commits atomically: never pending
UNTAGGED_SHARE_CHECK = "untagged_share"
TOP_OFFENDERS = 10
RECONCILIATION_PREVIEW_COLUMNS = (
    "source_name",
    "billing_period",
    "currency",
    "raw_rows",
    "focus_rows",
    "derived_rows",
    "allocated_rows",
    "raw_billed_cost",
    "focus_billed_cost",
    "allocated_billed_cost",
    "allocated_effective_cost",
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
    deps=[FOCUS_LINE_ITEMS, run_registry, resource_tag_snapshots],
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
        )
    ],
)
def cost_allocations(context: dg.AssetExecutionContext, runledger: RunLedgerResource) -> dg.MaterializeResult:
    """Every line item of the billing period attributed to a training run, experiment, dataset
    version and owner — by its own tags, the resource tag snapshot valid at its charge time, the
    run registry or a shared-cost rule, in that order — or explicitly `unattributed`, each part
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
        )
        recomputed = checks is not None
        if not recomputed:
            context.log.info(
                f"{billing_period:%Y-%m}: loads, registry, tag snapshots and settings unchanged; allocations kept "
                "(their per-line balance was proven when they were written; totals checked again)"
            )
            checks = period_totals(conn, billing_period)
        method_rows = conn.execute(
            read_sql("attribution/cost_allocations", "period_methods"), {"billing_period": billing_period}
        ).fetchall()
    totals_differ = [
        c
        for c in checks
        if c["focus_billed_cost"] != c["allocated_billed_cost"]
        or c["focus_effective_cost"] != c["allocated_effective_cost"]
    ]
    for method, rows, effective in method_rows:
        context.log.info(f"{billing_period:%Y-%m} {method}: {rows:,} allocations, effective cost {effective:,.2f}")
    return dg.MaterializeResult(
        metadata={
            "rows": dg.MetadataValue.int(sum(c["allocation_rows"] for c in checks)),
            "recomputed": dg.MetadataValue.bool(recomputed),
            "by_method": dg.MetadataValue.md(
                "| method | allocations | effective cost |\n|---|---:|---:|\n"
                + "\n".join(f"| {m} | {r:,} | {e:,.2f} |" for m, r, e in method_rows)
            ),
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
            )
        ],
    )


@dg.asset(
    deps=[cost_allocations, run_registry],
    group_name="attribution",
    owners=["team:finops"],
    kinds={"duckdb"},
    metadata=holds_tables("run_costs", inputs=SUMMARY_INPUTS["run_costs"]),
    pool=WAREHOUSE_POOL,
)
def run_costs(runledger: RunLedgerResource) -> dg.MaterializeResult:
    """The `run_costs` table: attributed spend per training run, cost category, billing period and
    currency, each run named with its registry (else its main) experiment, dataset version and
    owner. Rebuilt whole, only when the allocations or the registry changed (`step_inputs`)."""
    config = runledger.load_config()
    with runledger.warehouse(config) as conn:
        for attempt in transactions(conn):
            with attempt:
                rebuilt = build_summary_if_changed(conn, RUN_COSTS)
        runs = conn.execute(read_sql("marts/run_costs", "preview")).fetchall()
    return dg.MaterializeResult(
        metadata={
            "rows": dg.MetadataValue.int(sum(table_rows for *_, table_rows in runs)),
            "rebuilt": dg.MetadataValue.bool(rebuilt),
            "runs": dg.MetadataValue.md(
                "| run | currency | billed | effective | GPU-hours |\n|---|---|---:|---:|---:|\n"
                + "\n".join(f"| {r} | {c} | {b:,.2f} | {e:,.2f} | {g:,.2f} |" for r, c, b, e, g, _ in runs)
            ),
        }
    )


@dg.asset(
    deps=[FOCUS_LINE_ITEMS, cost_allocations],
    group_name="attribution",
    owners=["team:finops"],
    kinds={"duckdb"},
    metadata=holds_tables("unattributed_costs", inputs=SUMMARY_INPUTS["unattributed_costs"]),
    pool=WAREHOUSE_POOL,
    check_specs=[
        dg.AssetCheckSpec(
            UNTAGGED_SHARE_CHECK,
            asset="unattributed_costs",
            description="In every billing period the untagged spend (spend with no training run that tagging "
            "could move: lines of a resource) stays below `orchestration.untagged_share_threshold` of the period's "
            "effective cost. Commitments, tax, credits, support and charges without a resource are listed apart.",
        )
    ],
)
def unattributed_costs(runledger: RunLedgerResource) -> dg.MaterializeResult:
    """The `unattributed_costs` table: spend with no training run by provider, account, service,
    resource, commitment, spend kind and billing period, with its share of the period: the
    tag-hygiene worklist. Rebuilt whole, only when the allocations changed (`step_inputs`)."""
    config = runledger.load_config()
    threshold = Decimal(str(config.orchestration.untagged_share_threshold))
    with runledger.warehouse(config) as conn:
        for attempt in transactions(conn):
            with attempt:
                rebuilt = build_summary_if_changed(conn, UNATTRIBUTED_COSTS)
        (rows,) = conn.execute(read_sql("marts/unattributed_costs", "count")).fetchone()
        shares = conn.execute(read_sql("marts/unattributed_costs", "share")).fetchall()
        over = [
            (period, currency, share)
            for period, currency, *_, share in shares
            if share is not None and share > threshold
        ]
        offenders = conn.execute(
            read_sql("marts/unattributed_costs", "top_offenders"),
            {
                "billing_periods": [period for period, _, _ in over] or [period for period, *_ in shares],
                "limit": TOP_OFFENDERS,
            },
        ).fetchall()
        not_taggable = conn.execute(read_sql("marts/unattributed_costs", "not_taggable")).fetchall()
    return dg.MaterializeResult(
        metadata={"rows": dg.MetadataValue.int(rows), "rebuilt": dg.MetadataValue.bool(rebuilt)},
        check_results=[
            dg.AssetCheckResult(
                check_name=UNTAGGED_SHARE_CHECK,
                passed=not over,
                severity=dg.AssetCheckSeverity.WARN,
                description=(
                    "untagged share above "
                    f"{threshold:.0%} in " + ", ".join(f"{p:%Y-%m} {c} ({s:.1%})" for p, c, s in over)
                    if over
                    else f"untagged share at most {threshold:.0%} in every billing period"
                ),
                metadata={
                    "threshold": dg.MetadataValue.float(float(threshold)),
                    "share_by_period": dg.MetadataValue.md(
                        "| period | currency | effective | unattributed | untagged | share |\n"
                        "|---|---|---:|---:|---:|---:|\n"
                        + "\n".join(
                            f"| {p:%Y-%m} | {c} | {t:,.2f} | {a:,.2f} | {u:,.2f} | {s if s is None else f'{s:.2%}'} |"
                            for p, c, t, a, _, u, s in shares
                        )
                    ),
                    "top_offenders": dg.MetadataValue.md(
                        "| period | provider | account | service | resource | owner | effective | share |\n"
                        "|---|---|---|---|---|---|---:|---:|\n"
                        + "\n".join(
                            f"| {p:%Y-%m} | {pr} | {a} | {sv} | {r} | {o or ''} | {e:,.2f} {c} | "
                            f"{sh if sh is None else f'{sh:.2%}'} |"
                            for p, pr, a, sv, r, o, c, e, sh in offenders
                        )
                    ),
                    "not_taggable": dg.MetadataValue.md(
                        "| period | currency | kind | line items | effective |\n|---|---|---|---:|---:|\n"
                        + "\n".join(f"| {p:%Y-%m} | {c} | {k} | {n} | {e:,.2f} |" for p, c, k, n, e in not_taggable)
                    ),
                },
            )
        ],
    )


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
    their differences (all exactly 0)."""
    config = runledger.load_config()
    with runledger.warehouse(config) as conn:
        create_view(conn, "marts/reconciliation")
        cursor = conn.execute(read_sql("marts/reconciliation", "rows"))
        columns = [d[0] for d in cursor.description]
        rows = [dict(zip(columns, row)) for row in cursor.fetchall()]
    failures = [
        row
        for row in rows
        if any(value != 0 for key, value in row.items() if key.endswith("_diff") and RAW_FOCUS in key)
        or (not row["allocation_pending"] and any(value != 0 for key, value in row.items() if key.endswith("_diff")))
    ]
    pending = [f"{row['source_name']} {row['billing_period']:%Y-%m}" for row in rows if row["allocation_pending"]]
    totals = [tuple(row[column] for column in RECONCILIATION_PREVIEW_COLUMNS) for row in rows]
    return dg.MaterializeResult(
        metadata={
            "rows": dg.MetadataValue.int(len(rows)),
            "control_totals": dg.MetadataValue.md(
                "| source | period | currency | raw rows | focus rows | derived rows | allocated rows | raw billed "
                "| focus billed | allocated billed | allocated effective |\n"
                "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n"
                + "\n".join(
                    f"| {s} | {p:%Y-%m} | {c} | {rr:,} | {fr:,} | {dr:,} | {ar:,} | "
                    f"{rb:,.2f} | {fb:,.2f} | {ab:,.2f} | {ae:,.2f} |"
                    for s, p, c, rr, fr, dr, ar, rb, fb, ab, ae in totals
                )
            ),
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
                    "failures": dg.MetadataValue.json([{k: as_text(v) for k, v in f.items()} for f in failures]),
                    "allocation_pending": dg.MetadataValue.json(pending),
                },
            )
        ],
    )


@dg.asset(
    deps=[FOCUS_LINE_ITEMS, cost_allocations, reconciliation],
    group_name="attribution",
    owners=["team:finops"],
    kinds={"duckdb"},
    metadata=holds_tables("commitment_utilization", inputs=COMMITMENT_UTILIZATION_INPUTS),
    pool=WAREHOUSE_POOL,
)
def commitment_utilization(runledger: RunLedgerResource) -> dg.MaterializeResult:
    """`commitment_utilization`: every Savings Plan, reservation and committed use discount per
    billing period — its amortized cost, the part covered usage used and the unused part, how much
    of that unused part runs carry (`attribution.commitments`), utilization and coverage. Rebuilt
    whole, only after reconciliation passed, and only when the line items or allocations changed."""
    config = runledger.load_config()
    with runledger.warehouse(config) as conn:
        for attempt in transactions(conn):
            with attempt:
                rebuilt = build_commitment_utilization_if_changed(conn)
        # its rows: billing period, type, id, currency, committed, unused, charged to runs, utilization, coverage
        rows = conn.execute(read_sql("marts/commitment_utilization", "summary")).fetchall()
    return dg.MaterializeResult(
        metadata={
            "rows": dg.MetadataValue.int(len(rows)),
            "rebuilt": dg.MetadataValue.bool(rebuilt),
            "by_commitment": dg.MetadataValue.md(
                "| period | type | commitment | currency | committed | unused | charged to runs | utilization "
                "| coverage |\n|---|---|---|---|---:|---:|---:|---:|---:|\n"
                + "\n".join(
                    f"| {p:%Y-%m} | {t or ''} | {i} | {c} | {_amount(committed)} | {unused:,.2f} | {charged:,.2f} | "
                    f"{_share(utilization)} | {_share(coverage)} |"
                    for p, t, i, c, committed, unused, charged, utilization, coverage in rows
                )
            ),
        }
    )


def _amount(value: Decimal | None) -> str:
    return "" if value is None else f"{value:,.2f}"


def _share(value: Decimal | None) -> str:
    return "" if value is None else f"{value:.1%}"
