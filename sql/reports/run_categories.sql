-- The numbers table of each run in $training_runs: estimate, actual (effective) and variance per
-- cost category, plus one 'total' row. budget_variance is the source wherever it has the run;
-- otherwise the estimate comes from budget_baselines and the actual from run_costs (a run without
-- a budget, or one whose variance has not been computed yet).
with requested as (
    select distinct unnest($training_runs) as training_run
),

baseline as (
    select training_run, cost_category, estimated_cost, estimated_gpu_hours, estimated_rate
    from budget_baselines
    where training_run in (select training_run from requested) and cost_category <> 'total'
),

variance as (
    select * from budget_variance
    where training_run in (select training_run from requested)
),

allocated as (
    select
        training_run,
        cost_category,
        sum(effective_cost) as actual_cost,
        sum(gpu_hours) as actual_gpu_hours
    from run_costs
    where training_run in (select training_run from requested)
    group by training_run, cost_category
),

categories as (
    select training_run, cost_category from baseline
    union
    select training_run, cost_category from variance where cost_category <> 'total'
    union
    select training_run, cost_category from allocated
),

by_category as (
    select
        categories.training_run,
        categories.cost_category,
        coalesce(variance.estimated_cost, baseline.estimated_cost) as estimated_cost,
        coalesce(variance.actual_cost, allocated.actual_cost, 0) as actual_cost,
        variance.variance,
        variance.status,
        variance.forecast_at_completion,
        coalesce(variance.estimated_gpu_hours, baseline.estimated_gpu_hours) as estimated_gpu_hours,
        coalesce(variance.actual_gpu_hours, allocated.actual_gpu_hours) as actual_gpu_hours,
        coalesce(variance.estimated_rate, baseline.estimated_rate) as estimated_rate,
        variance.actual_rate,
        variance.rate_variance,
        variance.usage_variance,
        variance.estimated_effective_mfu,
        variance.actual_effective_mfu,
        variance.actual_tokens_per_gpu_second
    from categories
    left join baseline
        on categories.training_run = baseline.training_run and categories.cost_category = baseline.cost_category
    left join variance
        on categories.training_run = variance.training_run and categories.cost_category = variance.cost_category
    left join allocated
        on categories.training_run = allocated.training_run and categories.cost_category = allocated.cost_category
),

recorded_total as (
    select
        training_run,
        cost_category,
        estimated_cost,
        actual_cost,
        variance,
        status,
        forecast_at_completion,
        estimated_gpu_hours,
        actual_gpu_hours,
        estimated_rate,
        actual_rate,
        rate_variance,
        usage_variance,
        estimated_effective_mfu,
        actual_effective_mfu,
        actual_tokens_per_gpu_second
    from variance
    where cost_category = 'total'
),

summed_total as (
    select
        requested.training_run,
        'total' as cost_category,
        sum(by_category.estimated_cost) as estimated_cost,
        sum(by_category.actual_cost) as actual_cost,
        sum(by_category.variance) as variance,
        null as status,
        null as forecast_at_completion,
        sum(by_category.estimated_gpu_hours) as estimated_gpu_hours,
        sum(by_category.actual_gpu_hours) as actual_gpu_hours,
        null as estimated_rate,
        null as actual_rate,
        null as rate_variance,
        null as usage_variance,
        null as estimated_effective_mfu,
        null as actual_effective_mfu,
        null as actual_tokens_per_gpu_second
    from requested
    left join by_category on requested.training_run = by_category.training_run
    group by requested.training_run
),

lines as (
    select * from by_category
    union all by name
    select * from recorded_total
    union all by name
    select * from summed_total anti join recorded_total on summed_total.training_run = recorded_total.training_run
),

final as (
    select
        training_run,
        cost_category,
        estimated_cost,
        actual_cost,
        coalesce(variance, actual_cost - estimated_cost) as variance,
        coalesce(variance, actual_cost - estimated_cost) / nullif(estimated_cost, 0) as variance_ratio,
        status,
        forecast_at_completion,
        estimated_gpu_hours,
        actual_gpu_hours,
        estimated_rate,
        coalesce(
            actual_rate, cast(actual_cost / nullif(actual_gpu_hours, 0) as decimal(38, 10))
        ) as actual_rate,
        rate_variance,
        usage_variance,
        estimated_effective_mfu,
        actual_effective_mfu,
        actual_tokens_per_gpu_second
    from lines
)

select * from final
order by training_run, cost_category = 'total', cost_category
