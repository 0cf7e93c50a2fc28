-- The clusters each run in $training_runs ran on: the days it held GPUs there, its GPU-hours,
-- its share of the GPU-hours jobs held on the cluster on those days, its effective cost there and
-- the idle cost shared to it; most GPU-hours first.
with requested as (
    select distinct unnest($training_runs) as training_run
),

shares as (
    select * from run_cluster_share
    where training_run in (select training_run from requested)
),

run_days as (
    select
        shares.training_run,
        shares.cluster,
        shares.currency,
        min(shares.day) as first_day,
        max(shares.day) as last_day,
        count(distinct shares.day) as days,
        sum(shares.gpu_hours) as gpu_hours,
        sum(utilization.allocated_gpu_hours) as allocated_gpu_hours,
        sum(shares.effective_cost) as effective_cost,
        sum(shares.idle_cost) as idle_cost
    from shares
    left join cluster_utilization as utilization
        on
            shares.cluster = utilization.cluster
            and shares.currency = utilization.currency
            and shares.day = utilization.day
    group by shares.training_run, shares.cluster, shares.currency
),

final as (
    select
        training_run, cluster, currency, first_day, last_day, days, gpu_hours,
        gpu_hours / nullif(allocated_gpu_hours, 0) as share, effective_cost, idle_cost
    from run_days
)

select * from final
order by training_run, gpu_hours desc, cluster, currency
