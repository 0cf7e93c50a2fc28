-- The unused commitment commitment rules charged to each run in $training_runs, per billing
-- period, commitment and rule.
with requested as (
    select distinct unnest($training_runs) as training_run
),

allocations as (
    select
        training_run,
        x_LineItemKey,
        allocation_rule,
        BillingCurrency,
        cast(date_trunc('month', BillingPeriodStart) as date) as billing_period,
        effective_cost
    from cost_allocations
    where training_run in (select training_run from requested)
        and is_commitment_charge(allocation_method, allocation_rule)
),

line_items as (
    select x_LineItemKey, CommitmentDiscountId, CommitmentDiscountType
    from focus_line_items
    where CommitmentDiscountStatus = 'Unused'
),

final as (
    select
        allocations.training_run,
        allocations.billing_period,
        line_items.CommitmentDiscountType as commitment_type,
        line_items.CommitmentDiscountId as commitment_id,
        allocations.allocation_rule,
        allocations.BillingCurrency as currency,
        sum(allocations.effective_cost) as charged_cost
    from allocations
    inner join line_items on allocations.x_LineItemKey = line_items.x_LineItemKey
    group by all
)

select * from final
order by training_run, billing_period, commitment_id, allocation_rule
