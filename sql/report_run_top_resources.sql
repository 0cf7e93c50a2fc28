-- One run's largest resources by effective cost over all its billing periods, each with the
-- service and cost category of most of its cost, its GPU-hours and its share of the run's total;
-- lines without a resource id are one row per provider (resource NULL).
with allocations as (
    select * from cost_allocations where training_run = $training_run
),

resource_lines as (
    select
        ProviderName as provider,
        ResourceId as resource,
        ServiceName as service,
        x_CostCategory as cost_category,
        sum(effective_cost) as effective_cost,
        sum(gpu_hours) as gpu_hours
    from allocations
    group by ProviderName, ResourceId, ServiceName, x_CostCategory
),

resources as (
    select
        provider,
        resource,
        arg_max(service, effective_cost) as service,
        arg_max(cost_category, effective_cost) as cost_category,
        sum(effective_cost) as effective_cost,
        sum(gpu_hours) as gpu_hours
    from resource_lines
    group by provider, resource
),

final as (
    select
        provider,
        resource,
        service,
        cost_category,
        effective_cost,
        gpu_hours,
        decimal_divide(effective_cost, sum(effective_cost) over ()) as share_of_run,
        count(*) over () as resource_rows
    from resources
)

select * from final
order by effective_cost desc, provider, resource nulls last
limit $row_limit
