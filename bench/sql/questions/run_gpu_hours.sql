-- GPU-hours per training run.
select
    training_run,
    sum(gpu_hours) as gpu_hours
from run_costs
group by training_run
order by gpu_hours desc
