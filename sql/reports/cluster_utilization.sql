-- The shared clusters of the summary report, from the marts cluster_utilization and
-- run_cluster_share.

-- name: days
-- Each cluster's capacity, allocated and idle GPU-hours and idle cost per UTC day.
with utilization as (
    select * from cluster_utilization
),

final as (
    select
        cluster, currency, day, capacity_gpu_hours, allocated_gpu_hours, idle_gpu_hours, utilization, idle_cost,
        overhead_cost
    from utilization
)

select * from final
order by cluster, currency, day;

-- name: runs
-- Each cluster's runs over all its days: their GPU-hours, their share of the GPU-hours jobs held
-- on the cluster, their effective cost and the idle cost shared to them; most GPU-hours first.
with shares as (
    select
        cluster, currency, training_run, sum(gpu_hours) as gpu_hours, sum(effective_cost) as effective_cost,
        sum(idle_cost) as idle_cost
    from run_cluster_share
    group by cluster, currency, training_run
),

allocated as (
    select cluster, currency, sum(allocated_gpu_hours) as allocated_gpu_hours
    from cluster_utilization
    group by cluster, currency
),

final as (
    select
        shares.cluster,
        shares.currency,
        shares.training_run,
        shares.gpu_hours,
        shares.gpu_hours / nullif(allocated.allocated_gpu_hours, 0) as share,
        shares.effective_cost,
        shares.idle_cost
    from shares
    left join allocated on shares.cluster = allocated.cluster and shares.currency = allocated.currency
)

select * from final
order by cluster, currency, gpu_hours desc, training_run;
