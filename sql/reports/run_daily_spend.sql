-- The effective spend of each run in $training_runs per charge day (UTC) and cost category, each
-- allocation spread over its charge period by day (the macro run_day_parts, as budget_alerts).
with requested as (
    select distinct unnest($training_runs) as training_run
),

day_parts as (
    select training_run, charge_day, cost_category, effective_cost
    from run_day_parts()
    where training_run in (select training_run from requested)
),

final as (
    select training_run, charge_day, cost_category, effective_cost
    from day_parts
)

select * from final
order by training_run, charge_day, cost_category
