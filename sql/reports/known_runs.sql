-- Every run a report can be written for: it has a budget or attributed cost.
with runs as (
    select training_run from budget_baselines
    union
    select training_run from budget_variance
    union
    select training_run from cost_allocations where training_run is not null
),

final as (
    select distinct training_run from runs
)

select training_run from final
order by training_run
