-- Waste per run (largest share first): attributed effective cost, waste and its share.
with waste_items as (
    select * from waste
),

costs as (
    select training_run, any_value(owner) as owner, sum(effective_cost) as attributed_cost
    from run_costs
    group by training_run
),

per_run as (
    select training_run, sum(effective_cost) as waste_cost
    from waste_items
    group by training_run
),

final as (
    select
        costs.training_run,
        costs.owner,
        costs.attributed_cost,
        coalesce(per_run.waste_cost, 0) as waste_cost,
        decimal_divide(coalesce(per_run.waste_cost, 0), costs.attributed_cost) as waste_share
    from costs
    left join per_run on costs.training_run = per_run.training_run
)

select * from final
order by waste_share desc nulls last, training_run
