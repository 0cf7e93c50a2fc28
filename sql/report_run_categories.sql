-- One run's numbers table: estimate, actual (effective) and variance per cost category, plus one
-- 'total' row. budget_variance is the source wherever it has the run; otherwise the estimate comes
-- from budget_baselines and the actual from cost_allocations (a run without a budget, or one whose
-- variance has not been computed yet).
with baseline as (
    select cost_category, estimated_cost, estimated_gpu_hours, estimated_rate
    from budget_baselines
    where training_run = $training_run and cost_category <> 'total'
),

variance as (
    select * from budget_variance where training_run = $training_run
),

allocated as (
    select
        x_CostCategory as cost_category,
        sum(effective_cost) as actual_cost,
        sum(gpu_hours) as actual_gpu_hours
    from cost_allocations
    where training_run = $training_run
    group by x_CostCategory
),

categories as (
    select cost_category from baseline
    union
    select cost_category from variance where cost_category <> 'total'
    union
    select cost_category from allocated
),

by_category as (
    select
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
    left join baseline on categories.cost_category = baseline.cost_category
    left join variance on categories.cost_category = variance.cost_category
    left join allocated on categories.cost_category = allocated.cost_category
),

recorded_total as (
    select
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
        'total' as cost_category,
        sum(estimated_cost) as estimated_cost,
        sum(actual_cost) as actual_cost,
        sum(variance) as variance,
        null as status,
        null as forecast_at_completion,
        sum(estimated_gpu_hours) as estimated_gpu_hours,
        sum(actual_gpu_hours) as actual_gpu_hours,
        null as estimated_rate,
        null as actual_rate,
        null as rate_variance,
        null as usage_variance,
        null as estimated_effective_mfu,
        null as actual_effective_mfu,
        null as actual_tokens_per_gpu_second
    from by_category
),

lines as (
    select * from by_category
    union all by name
    select * from recorded_total
    union all by name
    select * from summed_total where not exists (select 1 from recorded_total)
),

final as (
    select
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
order by cost_category = 'total', cost_category
