-- Waste per run for the end of `runledger run`, largest share first; money rounded to cents for
-- display (the waste table keeps 10 decimals).
with per_run as (
    select * from waste_by_run
),

final as (
    select
        training_run,
        any_value(owner) as owner,
        round(sum(effective_cost), 2) as waste,
        round(decimal_divide(sum(effective_cost), any_value(attributed_cost)) * 100, 1) as waste_pct,
        round(sum(effective_cost) filter (where kind = 'idle_after_run'), 2) as idle_after_run,
        round(sum(effective_cost) filter (where kind = 'recompute_after_failure'), 2) as recompute,
        round(sum(effective_cost) filter (where kind = 'checkpoint_retention'), 2) as checkpoints,
        round(sum(effective_cost) filter (where kind = 'cross_region_transfer'), 2) as cross_region,
        round(sum(effective_cost) filter (where kind = 'duplicate_experiment'), 2) as duplicate,
        round(sum(effective_cost) filter (where kind = 'monitoring_growth'), 2) as monitoring
    from per_run
    group by training_run
)

select * from final
order by waste_pct desc, training_run
