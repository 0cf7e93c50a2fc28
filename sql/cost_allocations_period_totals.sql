-- Conservation totals of one billing period whose allocations were kept: per source and currency,
-- line items, allocation rows and both totals on each side. Their per-line balance was proven
-- when they were written (sql/cost_allocations_period_check.sql, in the same transaction).
with line_items as (
    select
        x_SourceName as source_name,
        BillingCurrency as currency,
        count(*) as line_items,
        coalesce(sum(BilledCost), 0) as focus_billed_cost,
        coalesce(sum(EffectiveCost), 0) as focus_effective_cost
    from focus_line_items
    where in_billing_period(BillingPeriodStart, $billing_period)
    group by all
),

allocations as (
    select
        x_SourceName as source_name,
        BillingCurrency as currency,
        count(*) as allocation_rows,
        sum(billed_cost) as allocated_billed_cost,
        sum(effective_cost) as allocated_effective_cost
    from cost_allocations
    where in_billing_period(BillingPeriodStart, $billing_period)
    group by all
),

final as (
    select
        coalesce(line_items.source_name, allocations.source_name) as source_name,
        coalesce(line_items.currency, allocations.currency) as currency,
        coalesce(line_items.line_items, 0) as line_items,
        coalesce(allocations.allocation_rows, 0) as allocation_rows,
        coalesce(line_items.focus_billed_cost, 0) as focus_billed_cost,
        coalesce(allocations.allocated_billed_cost, 0) as allocated_billed_cost,
        coalesce(line_items.focus_effective_cost, 0) as focus_effective_cost,
        coalesce(allocations.allocated_effective_cost, 0) as allocated_effective_cost
    from line_items
    full outer join allocations
        on line_items.source_name = allocations.source_name
        and line_items.currency is not distinct from allocations.currency
)

select * from final
order by source_name, currency
