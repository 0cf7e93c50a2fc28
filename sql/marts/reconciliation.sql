-- reconciliation: raw export = focus_line_items = cost_allocations (a view).

-- name: create
-- Conservation per source, billing period and currency: the raw export's control total
-- (recorded by the latest good load), focus_line_items and cost_allocations (`focus_totals` and
-- `allocation_totals` of every period, sql/schema/macros.sql: the totals the loads and the
-- attribution step check too). Every *_diff is 0, but the focus/allocated ones of a period whose
-- newest load came after its allocations (another run between the two: allocation_pending).
create or replace view reconciliation as
with latest_loads as (
    select *
    from loads
    where status = 'loaded'
    qualify row_number() over (
        partition by source_name, billing_period order by finished_at desc, load_id desc
    ) = 1
),

focus as (
    select
        source_name,
        billing_period,
        currency,
        line_items as focus_rows,
        derived_rows,
        billed_cost as focus_billed_cost,
        effective_cost as focus_effective_cost
    from focus_totals(null)
),

allocated as (
    select
        source_name,
        billing_period,
        currency,
        line_items as allocated_rows,
        billed_cost as allocated_billed_cost,
        effective_cost as allocated_effective_cost
    from allocation_totals(null)
),

allocation_builds as (
    select cast(partition_key as date) as billing_period, recorded_at
    from step_inputs
    where step = 'cost_allocations'
),

final as (
    select
        coalesce(focus.source_name, latest_loads.source_name) as source_name,
        coalesce(focus.billing_period, latest_loads.billing_period) as billing_period,
        coalesce(focus.currency, latest_loads.currency) as currency,
        coalesce(latest_loads.raw_rows, 0) as raw_rows,
        coalesce(focus.focus_rows, 0) as focus_rows,
        coalesce(focus.derived_rows, 0) as derived_rows,
        coalesce(allocated.allocated_rows, 0) as allocated_rows,
        coalesce(latest_loads.raw_billed_cost, 0) as raw_billed_cost,
        coalesce(focus.focus_billed_cost, 0) as focus_billed_cost,
        coalesce(allocated.allocated_billed_cost, 0) as allocated_billed_cost,
        coalesce(focus.focus_effective_cost, 0) as focus_effective_cost,
        coalesce(allocated.allocated_effective_cost, 0) as allocated_effective_cost,
        coalesce(latest_loads.raw_rows, 0) + coalesce(focus.derived_rows, 0) - coalesce(focus.focus_rows, 0)
            as rows_raw_focus_diff,
        coalesce(focus.focus_rows, 0) - coalesce(allocated.allocated_rows, 0) as rows_focus_allocated_diff,
        coalesce(latest_loads.raw_billed_cost, 0) - coalesce(focus.focus_billed_cost, 0) as billed_raw_focus_diff,
        coalesce(focus.focus_billed_cost, 0) - coalesce(allocated.allocated_billed_cost, 0)
            as billed_focus_allocated_diff,
        coalesce(focus.focus_effective_cost, 0) - coalesce(allocated.allocated_effective_cost, 0)
            as effective_focus_allocated_diff,
        coalesce(latest_loads.finished_at > allocation_builds.recorded_at, latest_loads.finished_at is not null)
            as allocation_pending
    from focus
    full outer join latest_loads
        on focus.source_name = latest_loads.source_name
        and focus.billing_period = latest_loads.billing_period
    left join allocated
        on coalesce(focus.source_name, latest_loads.source_name) = allocated.source_name
        and coalesce(focus.billing_period, latest_loads.billing_period) = allocated.billing_period
        and coalesce(focus.currency, latest_loads.currency) = allocated.currency
    left join allocation_builds
        on coalesce(focus.billing_period, latest_loads.billing_period) = allocation_builds.billing_period
)

select * from final
order by source_name, billing_period, currency;

-- name: rows
-- Every row of the reconciliation view, read once by the reconciliation asset (its checks and
-- preview) and once by a report batch: each read recomputes the view over every line item.
with final as (
    select * from reconciliation
)

select * from final
order by source_name, billing_period, currency;

-- name: comments
-- What the view and each column hold (read into DuckDB's catalog, the Dagster column schemas and
-- docs/warehouse.md); replacing the view drops them, so they follow every `create`.
comment on view reconciliation is
    'Conservation per (billing source, billing period, currency): the raw export''s control totals recorded by '
    'its latest good load, focus_line_items and cost_allocations side by side, and their differences, every one '
    '0 on a sound warehouse (the blocking check zero_differences). Money is DECIMAL(38,10).';
comment on column reconciliation.source_name is 'The billing source.';
comment on column reconciliation.billing_period is 'The billing month, as its first day.';
comment on column reconciliation.currency is 'BillingCurrency.';
comment on column reconciliation.raw_rows is 'Rows of the raw export (loads.raw_rows of the latest good load).';
comment on column reconciliation.focus_rows is 'Rows in focus_line_items.';
comment on column reconciliation.derived_rows is
    'Rows among focus_rows that RunLedger derived from a line of the export (x_DerivedFrom: the unused part of '
    'an AWS commitment fee, the used and unused parts of a GCP commitment fee), billed 0: focus_rows = raw_rows + '
    'derived_rows.';
comment on column reconciliation.allocated_rows is 'Line items with allocations in cost_allocations.';
comment on column reconciliation.raw_billed_cost is 'Billed cost of the raw export (loads.raw_billed_cost).';
comment on column reconciliation.focus_billed_cost is 'Sum of BilledCost in focus_line_items.';
comment on column reconciliation.allocated_billed_cost is 'Sum of billed_cost in cost_allocations.';
comment on column reconciliation.focus_effective_cost is 'Sum of EffectiveCost in focus_line_items.';
comment on column reconciliation.allocated_effective_cost is 'Sum of effective_cost in cost_allocations.';
comment on column reconciliation.rows_raw_focus_diff is 'raw_rows + derived_rows - focus_rows: 0.';
comment on column reconciliation.rows_focus_allocated_diff is 'focus_rows - allocated_rows: 0.';
comment on column reconciliation.billed_raw_focus_diff is 'raw_billed_cost - focus_billed_cost: 0.';
comment on column reconciliation.billed_focus_allocated_diff is 'focus_billed_cost - allocated_billed_cost: 0.';
comment on column reconciliation.allocation_pending is
    'True while the period''s newest load is newer than its allocations (or it has none yet): a run is between '
    'loading and attributing it, and its focus/allocated differences are expected until it is done.';
comment on column reconciliation.effective_focus_allocated_diff is
    'focus_effective_cost - allocated_effective_cost: 0.';
