-- One billing period of cost_allocations: its removal before a rebuild, its conservation
-- checks, and what the attribution asset and `runledger check` show of it.

-- name: delete_period
-- All allocations of one billing period, before they are rebuilt (same transaction).
delete from cost_allocations
where in_billing_period(BillingPeriodStart, $billing_period);

-- name: period_totals
-- Conservation totals of one billing period, per source and currency: line items, allocation rows
-- and both totals on each side, from `focus_totals` and `allocation_totals`
-- (sql/schema/macros.sql), the totals the reconciliation view and the loads compare too.
with line_items as (
    select * from focus_totals($billing_period)
),

allocations as (
    select * from allocation_totals($billing_period)
),

final as (
    select
        coalesce(line_items.source_name, allocations.source_name) as source_name,
        coalesce(line_items.currency, allocations.currency) as currency,
        coalesce(line_items.line_items, 0) as line_items,
        coalesce(allocations.allocation_rows, 0) as allocation_rows,
        coalesce(line_items.billed_cost, 0) as focus_billed_cost,
        coalesce(allocations.billed_cost, 0) as allocated_billed_cost,
        coalesce(line_items.effective_cost, 0) as focus_effective_cost,
        coalesce(allocations.effective_cost, 0) as allocated_effective_cost
    from line_items
    full outer join allocations
        on line_items.source_name = allocations.source_name
        and line_items.currency is not distinct from allocations.currency
)

select * from final
order by source_name, currency;

-- name: period_unbalanced_lines
-- The per-line conservation check of one billing period, per source and currency: the line items
-- whose allocations' ratios do not sum to 1 or whose allocated costs differ from its BilledCost
-- and EffectiveCost (a line without allocations, or allocations without their line, count too).
with line_items as (
    select
        x_LineItemKey,
        x_SourceName,
        BillingCurrency,
        coalesce(BilledCost, 0) as billed_cost,
        coalesce(EffectiveCost, 0) as effective_cost
    from focus_line_items
    where in_billing_period(BillingPeriodStart, $billing_period)
),

allocations as (
    select
        x_LineItemKey,
        any_value(x_SourceName) as x_SourceName,
        any_value(BillingCurrency) as BillingCurrency,
        sum(allocation_ratio) as ratio,
        sum(billed_cost) as billed_cost,
        sum(effective_cost) as effective_cost
    from cost_allocations
    where in_billing_period(BillingPeriodStart, $billing_period)
    group by x_LineItemKey
),

final as (
    select
        coalesce(line_items.x_SourceName, allocations.x_SourceName) as source_name,
        coalesce(line_items.BillingCurrency, allocations.BillingCurrency) as currency,
        count(*) filter (
            where line_items.x_LineItemKey is null
                or allocations.x_LineItemKey is null
                or allocations.ratio <> 1
                or allocations.billed_cost <> line_items.billed_cost
                or allocations.effective_cost <> line_items.effective_cost
        ) as unbalanced_line_items
    from line_items
    full outer join allocations on line_items.x_LineItemKey = allocations.x_LineItemKey
    group by all
)

select * from final
order by source_name, currency;

-- name: period_methods
-- Allocations of one billing period by method: rows and effective cost.
select allocation_method, count(*) as allocations, sum(effective_cost) as effective_cost
from cost_allocations
where in_billing_period(BillingPeriodStart, $billing_period)
group by allocation_method
order by allocation_method;

-- name: run_currencies
-- Every training run with attributed spend in the warehouse and the currencies it is billed in
-- (`runledger check`).
select
    training_run,
    list(distinct BillingCurrency order by BillingCurrency) filter (where BillingCurrency is not null)
        as currencies
from cost_allocations
where training_run is not null
group by training_run
order by training_run;
