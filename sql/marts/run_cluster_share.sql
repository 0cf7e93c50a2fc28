-- run_cluster_share: each run's share of each shared cluster per day.

-- name: insert
-- Rebuilds run_cluster_share from the allocations of runs that name a cluster: the jobs' parts
-- (GPU-hours held and their cost) and the shared idle capacity (cost only), each run's GPU-hours
-- divided by the cluster's allocated GPU-hours that day (cluster_utilization).
delete from run_cluster_share;

insert into run_cluster_share by name
with allocations as (
    select
        cluster,
        cast(ChargePeriodStart as date) as day,
        BillingCurrency as currency,
        training_run,
        allocation_method = 'shared' and allocation_rule = 'idle ' || cluster as idle_part,
        gpu_hours,
        effective_cost
    from cost_allocations
    where cluster is not null and training_run is not null
),

utilization as (
    select * from cluster_utilization
),

runs as (
    select
        cluster,
        day,
        currency,
        training_run,
        coalesce(sum(gpu_hours) filter (where not idle_part), 0) as gpu_hours,
        sum(effective_cost) as effective_cost,
        coalesce(sum(effective_cost) filter (where idle_part), 0) as idle_cost
    from allocations
    group by cluster, day, currency, training_run
),

final as (
    select
        runs.cluster,
        runs.day,
        runs.currency,
        runs.training_run,
        runs.gpu_hours,
        decimal_divide(runs.gpu_hours, utilization.allocated_gpu_hours) as share,
        runs.effective_cost,
        runs.idle_cost
    from runs
    left join utilization
        on runs.cluster = utilization.cluster
        and runs.day = utilization.day
        and runs.currency is not distinct from utilization.currency
)

select * from final
order by cluster, day, currency, training_run;

-- name: summary
-- Per cluster, run and currency over every day: GPU-hours, share of the cluster's allocated
-- GPU-hours and cost, for the asset's metadata.
with shares as (
    select * from run_cluster_share
),

cluster_totals as (
    select cluster, currency, sum(allocated_gpu_hours) as allocated_gpu_hours
    from cluster_utilization
    group by cluster, currency
),

final as (
    select
        shares.cluster,
        shares.currency,
        shares.training_run,
        sum(shares.gpu_hours) as gpu_hours,
        decimal_divide(sum(shares.gpu_hours), any_value(cluster_totals.allocated_gpu_hours)) as share,
        sum(shares.effective_cost) as effective_cost,
        sum(shares.idle_cost) as idle_cost
    from shares
    left join cluster_totals
        on shares.cluster = cluster_totals.cluster
        and shares.currency is not distinct from cluster_totals.currency
    group by shares.cluster, shares.currency, shares.training_run
)

select * from final
order by cluster, currency, gpu_hours desc, training_run;

-- name: count
select count(*) from run_cluster_share;
