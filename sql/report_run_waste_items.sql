-- One run's largest waste items by effective cost, with how they were computed.
with waste_items as (
    select * from waste where training_run = $training_run
),

final as (
    select kind, cost_category, effective_cost, gpu_hours, detail, method
    from waste_items
    order by effective_cost desc, kind, detail
    limit $row_limit
)

select * from final
