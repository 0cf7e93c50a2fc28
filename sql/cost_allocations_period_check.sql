-- Conservation of one billing period, per source and currency: every line item's allocations
-- have ratios summing to 1 and costs summing exactly to its BilledCost and EffectiveCost.
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
        sum(effective_cost) as effective_cost,
        count(*) as allocation_rows
    from cost_allocations
    where in_billing_period(BillingPeriodStart, $billing_period)
    group by x_LineItemKey
),

final as (
    select
        coalesce(line_items.x_SourceName, allocations.x_SourceName) as source_name,
        coalesce(line_items.BillingCurrency, allocations.BillingCurrency) as currency,
        count(line_items.x_LineItemKey) as line_items,
        coalesce(sum(allocations.allocation_rows), 0) as allocation_rows,
        count(*) filter (
            where line_items.x_LineItemKey is null
                or allocations.x_LineItemKey is null
                or allocations.ratio <> 1
                or allocations.billed_cost <> line_items.billed_cost
                or allocations.effective_cost <> line_items.effective_cost
        ) as unbalanced_line_items,
        coalesce(sum(line_items.billed_cost), 0) as focus_billed_cost,
        coalesce(sum(allocations.billed_cost), 0) as allocated_billed_cost,
        coalesce(sum(line_items.effective_cost), 0) as focus_effective_cost,
        coalesce(sum(allocations.effective_cost), 0) as allocated_effective_cost
    from line_items
    full outer join allocations on line_items.x_LineItemKey = allocations.x_LineItemKey
    group by all
)

select * from final
order by source_name, currency
