-- One run's effective spend per charge day (UTC) and cost category.
with allocations as (
    select
        cast(coalesce(ChargePeriodStart, BillingPeriodStart) as date) as charge_day,
        x_CostCategory as cost_category,
        effective_cost
    from cost_allocations
    where training_run = $training_run
),

final as (
    select charge_day, cost_category, sum(effective_cost) as effective_cost
    from allocations
    group by charge_day, cost_category
)

select * from final
order by charge_day, cost_category
