-- cluster_utilization: each shared cluster's capacity, use and idle part per day.

-- name: insert
-- Rebuilds cluster_utilization from the allocations that name a cluster: the idle parts are
-- idle_capacity with rule `unallocated` and the `shared` parts of rule `idle <cluster>` (idle
-- capacity shared with runs), the overhead parts rule `system overhead`, the rest jobs'.
delete from cluster_utilization;

insert into cluster_utilization by name
with allocations as (
    select
        cluster,
        cast(ChargePeriodStart as date) as day,
        BillingCurrency as currency,
        gpu_hours,
        effective_cost,
        case
            when allocation_method = 'idle_capacity' and allocation_rule = 'system overhead' then 'overhead'
            when allocation_method = 'idle_capacity' then 'idle'
            when allocation_method = 'shared' and allocation_rule = 'idle ' || cluster then 'idle'
            else 'allocated'
        end as part
    from cost_allocations
    where cluster is not null
),

final as (
    select
        cluster,
        day,
        currency,
        sum(gpu_hours) as capacity_gpu_hours,
        coalesce(sum(gpu_hours) filter (where part = 'allocated'), 0) as allocated_gpu_hours,
        coalesce(sum(gpu_hours) filter (where part = 'idle'), 0) as idle_gpu_hours,
        decimal_divide(coalesce(sum(gpu_hours) filter (where part = 'allocated'), 0), sum(gpu_hours))
            as utilization,
        sum(effective_cost) as effective_cost,
        coalesce(sum(effective_cost) filter (where part = 'allocated'), 0) as allocated_cost,
        coalesce(sum(effective_cost) filter (where part = 'idle'), 0) as idle_cost,
        coalesce(sum(effective_cost) filter (where part = 'overhead'), 0) as overhead_cost
    from allocations
    group by cluster, day, currency
)

select * from final
order by cluster, day, currency;

-- name: summary
-- Per cluster and currency over every day: capacity, allocated and idle GPU-hours, utilization and
-- idle cost, for the asset's metadata.
with days as (
    select * from cluster_utilization
),

final as (
    select
        cluster,
        currency,
        min(day) as first_day,
        max(day) as last_day,
        sum(capacity_gpu_hours) as capacity_gpu_hours,
        sum(allocated_gpu_hours) as allocated_gpu_hours,
        sum(idle_gpu_hours) as idle_gpu_hours,
        decimal_divide(sum(allocated_gpu_hours), sum(capacity_gpu_hours)) as utilization,
        sum(idle_cost) as idle_cost
    from days
    group by cluster, currency
)

select * from final
order by cluster, currency;

-- name: count
select count(*) from cluster_utilization;

-- name: overview
-- Per cluster and currency, as `runledger run` prints it: the days, GPU-hours, utilization in
-- percent and idle cost, rounded for reading.
with days as (
    select * from cluster_utilization
),

final as (
    select
        cluster,
        min(day) as first_day,
        max(day) as last_day,
        round(sum(capacity_gpu_hours), 2) as capacity_gpu_hours,
        round(sum(allocated_gpu_hours), 2) as allocated_gpu_hours,
        round(sum(idle_gpu_hours), 2) as idle_gpu_hours,
        round(decimal_divide(sum(allocated_gpu_hours), sum(capacity_gpu_hours)) * 100, 1) as utilization_pct,
        round(sum(idle_cost), 2) as idle_cost,
        currency
    from days
    group by cluster, currency
)

select * from final
order by cluster, currency;
