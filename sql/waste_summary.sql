-- Waste per run (largest share first): attributed cost, waste, its share, and per kind.
with waste_items as (
    select * from waste
),

costs as (
    select training_run, any_value(owner) as owner, sum(effective_cost) as attributed_cost
    from run_costs
    group by training_run
),

per_run as (
    select
        training_run,
        sum(effective_cost) as waste_cost,
        sum(effective_cost) filter (where kind = 'idle_after_run') as idle_after_run,
        sum(effective_cost) filter (where kind = 'recompute_after_failure') as recompute_after_failure,
        sum(effective_cost) filter (where kind = 'checkpoint_retention') as checkpoint_retention,
        sum(effective_cost) filter (where kind = 'cross_region_transfer') as cross_region_transfer,
        sum(effective_cost) filter (where kind = 'duplicate_experiment') as duplicate_experiment,
        sum(effective_cost) filter (where kind = 'monitoring_growth') as monitoring_growth
    from waste_items
    group by training_run
),

final as (
    select
        costs.training_run,
        costs.owner,
        costs.attributed_cost,
        coalesce(per_run.waste_cost, 0) as waste_cost,
        decimal_divide(coalesce(per_run.waste_cost, 0), costs.attributed_cost) as waste_share,
        per_run.idle_after_run,
        per_run.recompute_after_failure,
        per_run.checkpoint_retention,
        per_run.cross_region_transfer,
        per_run.duplicate_experiment,
        per_run.monitoring_growth
    from costs
    left join per_run on costs.training_run = per_run.training_run
)

select * from final
order by waste_share desc nulls last, training_run
