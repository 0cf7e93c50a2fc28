-- The GPU-hours of each run in $training_runs by pricing type, most GPU-hours first.
with requested as (
    select distinct unnest($training_runs) as training_run
),

pricing as (
    select * from run_pricing
    where training_run in (select training_run from requested)
),

final as (
    select training_run, pricing, gpu_hours, effective_cost, cost_per_gpu_hour, gpu_hours_share
    from pricing
)

select * from final
order by training_run, gpu_hours desc, pricing
