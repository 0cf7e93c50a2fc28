-- The effective spend of each run in $training_runs per charge day (UTC) and cost category.
with requested as (
    select distinct unnest($training_runs) as training_run
),

allocations as (
    select
        training_run,
        cast(coalesce(ChargePeriodStart, BillingPeriodStart) as date) as charge_day,
        x_CostCategory as cost_category,
        effective_cost
    from cost_allocations
    where training_run in (select training_run from requested)
),

final as (
    select training_run, charge_day, cost_category, sum(effective_cost) as effective_cost
    from allocations
    group by training_run, charge_day, cost_category
)

select * from final
order by training_run, charge_day, cost_category
