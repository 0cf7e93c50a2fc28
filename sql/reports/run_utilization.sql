-- The hours of run_utilization of each run in $training_runs, earliest first.
with requested as (
    select distinct unnest($training_runs) as training_run
),

final as (
    select training_run, hour, gpus, gpu_utilization, data_wait_share, samples, data_wait_gpu_hours
    from run_utilization
    where training_run in (select training_run from requested)
)

select * from final
order by training_run, hour
