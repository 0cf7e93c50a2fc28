-- One line per training run for the end of `runledger run`: actual spend against its budget,
-- money rounded to cents for display (the tables keep 10 decimals).
with costs as (
    select
        training_run,
        any_value(owner) filter (where owner is not null) as owner,
        any_value(currency) as currency,
        sum(gpu_hours) as gpu_hours,
        sum(effective_cost) as actual_cost
    from run_costs
    group by training_run
),

budgets as (
    select training_run, estimated_cost, variance, variance_pct, status
    from budget_variance
    where cost_category = 'total'
),

final as (
    select
        coalesce(costs.training_run, budgets.training_run) as training_run,
        costs.owner,
        costs.currency,
        round(coalesce(costs.gpu_hours, 0), 1) as gpu_hours,
        round(coalesce(costs.actual_cost, 0), 2) as actual_cost,
        round(budgets.estimated_cost, 2) as estimated_cost,
        round(budgets.variance, 2) as variance,
        round(budgets.variance_pct * 100, 1) as variance_pct,
        budgets.status
    from costs
    full outer join budgets on costs.training_run = budgets.training_run
)

select * from final
order by actual_cost desc
