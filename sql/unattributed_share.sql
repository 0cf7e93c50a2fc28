-- Per billing period and currency: total effective spend, the part with no training run and its
-- share (the reports and the untagged_share check both read it).
with allocations as (
    select
        cast(date_trunc('month', BillingPeriodStart) as date) as billing_period,
        BillingCurrency as currency,
        training_run,
        effective_cost
    from cost_allocations
),

final as (
    select
        billing_period,
        currency,
        sum(effective_cost) as effective_cost,
        coalesce(sum(effective_cost) filter (where training_run is null), 0) as unattributed_cost,
        coalesce(sum(effective_cost) filter (where training_run is null), 0)
            / nullif(sum(effective_cost), 0) as unattributed_share
    from allocations
    group by billing_period, currency
)

select * from final
order by billing_period, currency
