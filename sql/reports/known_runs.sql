-- Every run a report can be written for: it has a budget or attributed cost (a run_costs row).
with runs as (
    select training_run from budget_baselines
    union
    select training_run from budget_variance
    union
    select training_run from run_costs
),

final as (
    select distinct training_run from runs
)

select training_run from final
order by training_run
