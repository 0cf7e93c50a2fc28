-- The shared clusters of the summary report, from the mart cluster_utilization (its runs: the
-- `summary` of sql/marts/run_cluster_share.sql).

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
