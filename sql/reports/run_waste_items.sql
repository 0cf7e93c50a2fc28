-- The largest waste items by effective cost of each run in $training_runs ($row_limit per run),
-- with how they were computed.
with requested as (
    select distinct unnest($training_runs) as training_run
),

waste_items as (
    select * from waste
    where training_run in (select training_run from requested)
),

ranked as (
    select
        training_run,
        kind,
        cost_category,
        effective_cost,
        gpu_hours,
        detail,
        method,
        row_number() over (partition by training_run order by effective_cost desc, kind, detail) as item_rank
    from waste_items
),

final as (
    select * from ranked
    where item_rank <= $row_limit
)

select * exclude (item_rank) from final
order by training_run, item_rank
