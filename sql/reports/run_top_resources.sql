-- The largest resources by effective cost of each run in $training_runs over all its billing
-- periods ($row_limit per run), each with the service and cost category of most of its cost, its
-- GPU-hours and its share of the run's total, and how many resources the run used in all; lines
-- without a resource id are one row per provider (resource NULL).
with requested as (
    select distinct unnest($training_runs) as training_run
),

allocations as (
    select * from cost_allocations
    where training_run in (select training_run from requested)
),

resource_lines as (
    select
        training_run,
        ProviderName as provider,
        ResourceId as resource,
        ServiceName as service,
        x_CostCategory as cost_category,
        sum(effective_cost) as effective_cost,
        sum(gpu_hours) as gpu_hours
    from allocations
    group by training_run, ProviderName, ResourceId, ServiceName, x_CostCategory
),

resources as (
    select
        training_run,
        provider,
        resource,
        arg_max(service, effective_cost) as service,
        arg_max(cost_category, effective_cost) as cost_category,
        sum(effective_cost) as effective_cost,
        sum(gpu_hours) as gpu_hours
    from resource_lines
    group by training_run, provider, resource
),

ranked as (
    select
        training_run,
        provider,
        resource,
        service,
        cost_category,
        effective_cost,
        gpu_hours,
        decimal_divide(effective_cost, sum(effective_cost) over run_resources) as share_of_run,
        count(*) over run_resources as resource_rows,
        row_number() over (
            partition by training_run order by effective_cost desc, provider, resource nulls last
        ) as resource_rank
    from resources
    window run_resources as (partition by training_run)
),

final as (
    select * from ranked
    where resource_rank <= $row_limit
)

select * exclude (resource_rank) from final
order by training_run, resource_rank
