-- Waste per run, kind and cost category, with the run's attributed cost and the waste's share.
-- name: create
create or replace view waste_by_run as
with waste_items as (
    select * from waste
),

costs as (
    select training_run, sum(effective_cost) as attributed_cost
    from run_costs
    group by training_run
),

final as (
    select
        waste_items.training_run,
        any_value(waste_items.owner) as owner,
        waste_items.kind,
        waste_items.cost_category,
        count(*) as items,
        sum(waste_items.effective_cost) as effective_cost,
        sum(waste_items.gpu_hours) as gpu_hours,
        any_value(costs.attributed_cost) as attributed_cost,
        decimal_divide(sum(waste_items.effective_cost), any_value(costs.attributed_cost)) as share_of_run
    from waste_items
    left join costs on waste_items.training_run = costs.training_run
    group by waste_items.training_run, waste_items.kind, waste_items.cost_category
)

select * from final;
