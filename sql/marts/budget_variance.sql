-- budget_variance: actual spend against each run's baseline.

-- name: insert
-- Rebuilds budget_variance: every budgeted run's actual (effective) spend against its baseline,
-- one row per cost category found in the baseline or in the run's allocations (all billing
-- periods), plus one row cost_category = 'total'. Runs without a baseline are left out.
-- $elastic_categories: the categories whose spend is elastic where the baseline has no line of
-- them (pipelines.budgets.schema.cost_behavior).
-- Uses the macros budget_status, decimal_divide, effective_mfu and run_as_of (sql/schema/macros.sql), created with
-- the schema, and the run's progress from run_progress (built before it).
-- Every amount is DECIMAL(38, 10): sums and differences are exact; products are DECIMAL(38, 20)
-- (exact below 1e18) and rounded back to 10 decimals; quotients come from decimal_divide because
-- DuckDB divides DECIMALs in DOUBLE.
delete from budget_variance;

insert into budget_variance by name
with baselines as (
    select * from budget_baselines
),

-- allocations is read more than once: scanning cost_allocations again costs less than DuckDB
-- materializing every allocation row as a CTE
allocations as not materialized (
    select * from cost_allocations
),

progress as (
    select * from run_progress
),

-- as_of is the data's "now" per run: the newest hour with usage of the sources carrying its spend
-- (macro run_as_of), not the wall clock, so a rebuild from the same data gives the same table.
runs_as_of as (
    select * from run_as_of()
),

runs as (
    select
        training_run,
        any_value(currency) as currency,
        any_value(thresholds) as thresholds,
        any_value("window") as budget_window,
        any_value(training_tokens) filter (where cost_category = 'compute') as training_tokens,
        any_value(estimated_wall_clock_hours) filter (where cost_category = 'compute') as planned_wall_clock_hours
    from baselines
    group by training_run
),

-- the run's first charge of its own spend (not split to it by a shared rule): where a run without
-- events starts its wall-clock
first_usage as (
    select training_run, min(coalesce(ChargePeriodStart, BillingPeriodStart)) as first_usage
    from allocations
    where training_run in (select training_run from runs) and allocation_method <> 'shared'
    group by training_run
),

run_windows as (
    select
        runs.*,
        coalesce(progress.as_of, runs_as_of.as_of) as as_of,
        runs_as_of.as_of_by_source,
        progress.state as progress_state,
        progress.tokens_trained,
        first_usage.first_usage,
        cast(runs.budget_window['start'] as timestamp) as window_start,
        cast(runs.budget_window['end'] as timestamp) as window_end
    from runs
    left join runs_as_of on runs.training_run = runs_as_of.training_run
    left join progress on runs.training_run = progress.training_run
    left join first_usage on runs.training_run = first_usage.training_run
),

-- elapsed: the fraction of the budget window [start, end) behind as_of, clamped to [0, 1].
-- done: how far the run is, in [0, 1]: with events and planned tokens, tokens trained / planned
-- tokens (method progress); else the wall-clock since its first own usage / the planned wall-clock
-- (or, without a model, the elapsed budget window; method linear). A run is ended once its latest
-- event is an end, or, without events, once its budget window has passed (method actual).
run_elapsed as (
    select
        *,
        case
            when as_of is null then cast(0 as decimal(38, 10))
            else decimal_divide(
                greatest(0, least(
                    date_diff('second', window_start, window_end),
                    date_diff('second', window_start, as_of)
                )),
                date_diff('second', window_start, window_end)
            )
        end as elapsed
    from run_windows
),

run_methods as (
    select
        *,
        case
            when progress_state = 'ended' then 'actual'
            when progress_state is null and elapsed = 1 then 'actual'
            when progress_state is not null and tokens_trained is not null and training_tokens > 0 then 'progress'
            else 'linear'
        end as forecast_method
    from run_elapsed
),

run_progress_done as (
    select
        *,
        case forecast_method
            when 'actual' then cast(1 as decimal(38, 10))
            when 'progress' then least(1, decimal_divide(tokens_trained, training_tokens))
            when 'linear' then case
                when planned_wall_clock_hours is null then elapsed
                when first_usage is null or as_of is null then cast(0 as decimal(38, 10))
                else least(1, greatest(0, decimal_divide(
                    date_diff('second', first_usage, as_of), planned_wall_clock_hours * 3600
                )))
            end
        end as done
    from run_methods
),

actuals as (
    select
        training_run,
        x_CostCategory as cost_category,
        sum(effective_cost) as actual_cost,
        sum(gpu_hours) as actual_gpu_hours
    from allocations
    where training_run in (select training_run from runs)
    group by training_run, x_CostCategory
),

run_categories as (
    select training_run, cost_category from baselines
    union
    select training_run, cost_category from actuals
),

category_amounts as (
    select
        run_categories.training_run,
        run_categories.cost_category,
        coalesce(
            baselines.cost_behavior,
            if(list_contains($elastic_categories, run_categories.cost_category), 'elastic', 'fixed')
        ) as cost_behavior,
        coalesce(baselines.estimated_cost, cast(0 as decimal(38, 10))) as estimated_cost,
        coalesce(actuals.actual_cost, cast(0 as decimal(38, 10))) as actual_cost,
        baselines.estimated_gpu_hours,
        baselines.estimated_rate,
        baselines.training_tokens,
        baselines.gpu_hours_at_peak,
        case
            when run_categories.cost_category = 'compute'
                then coalesce(actuals.actual_gpu_hours, cast(0 as decimal(38, 10)))
        end as actual_gpu_hours,
        -- the budget's fixed lines are committed once: neither pro-rated nor extrapolated
        coalesce(baselines.cost_behavior = 'fixed', false) as is_fixed
    from run_categories
    left join baselines
        on baselines.training_run = run_categories.training_run
        and baselines.cost_category = run_categories.cost_category
    left join actuals
        on actuals.training_run = run_categories.training_run
        and actuals.cost_category = run_categories.cost_category
),

-- forecast_at_completion per category: an ended run's actual; a fixed amount at least its
-- estimate; else the spend so far / done: with progress, the spend of the remaining planned tokens
-- at the GPU-hours per token and the cost per GPU-hour observed so far (for compute), and likewise
-- for the other elastic categories. reference: what the run should have spent by now, the fixed
-- estimate once the run has started or the estimate pro rata to done, for the status.
category_forecasts as (
    select
        category_amounts.*,
        run_progress_done.forecast_method,
        case
            when run_progress_done.forecast_method = 'actual' then category_amounts.actual_cost
            when category_amounts.is_fixed then greatest(category_amounts.actual_cost, category_amounts.estimated_cost)
            else decimal_divide(category_amounts.actual_cost, run_progress_done.done)
        end as forecast_at_completion,
        case
            when run_progress_done.done = 0 then cast(0 as decimal(38, 10))
            when category_amounts.is_fixed then category_amounts.estimated_cost
            else round(category_amounts.estimated_cost * run_progress_done.done, 10)
        end as reference_cost
    from category_amounts
    inner join run_progress_done on category_amounts.training_run = run_progress_done.training_run
),

total_amounts as (
    select
        training_run,
        'total' as cost_category,
        sum(estimated_cost) as estimated_cost,
        sum(actual_cost) as actual_cost,
        any_value(forecast_method) as forecast_method,
        -- NULL when a category has none (a run with no progress yet)
        if(count(*) = count(forecast_at_completion), sum(forecast_at_completion), null) as forecast_at_completion,
        sum(reference_cost) as reference_cost
    from category_forecasts
    group by training_run
),

amounts as (
    select * from category_forecasts
    union all by name
    select * from total_amounts
),

-- Compute only (NULL elsewhere, and when the baseline has no resource model):
-- usage_variance = round((actual_gpu_hours - estimated_gpu_hours) * estimated_rate, 10) and
-- rate_variance = variance - usage_variance, so rate_variance + usage_variance = variance exactly.
-- As the baseline's estimated_cost = round(estimated_gpu_hours * estimated_rate, 10), this gives
-- rate_variance = actual_cost - actual_gpu_hours * estimated_rate
--               = (actual_rate - estimated_rate) * actual_gpu_hours
-- up to those two roundings at the 10th decimal (with the unrounded actual_rate). Compute spend
-- without GPU-hours (CPU instances, ...) therefore lands in rate_variance.
variances as (
    select
        amounts.*,
        run_progress_done.currency,
        run_progress_done.elapsed,
        run_progress_done.as_of,
        run_progress_done.as_of_by_source,
        amounts.actual_cost - amounts.estimated_cost as variance,
        round(
            (amounts.actual_gpu_hours - amounts.estimated_gpu_hours) * amounts.estimated_rate, 10
        ) as usage_variance,
        amounts.estimated_cost * run_progress_done.thresholds['over'] as over_from,
        amounts.estimated_cost * run_progress_done.thresholds['warning'] as warning_from
    from amounts
    inner join run_progress_done on run_progress_done.training_run = amounts.training_run
),

final as (
    select
        training_run,
        cost_category,
        cost_behavior,
        currency,
        estimated_cost,
        actual_cost,
        variance,
        decimal_divide(variance, estimated_cost) as variance_pct,
        budget_status(
            estimated_cost, actual_cost, warning_from, over_from, reference_cost, forecast_method = 'actual'
        ) as status,
        forecast_at_completion,
        forecast_method,
        estimated_gpu_hours,
        actual_gpu_hours,
        estimated_rate,
        decimal_divide(actual_cost, actual_gpu_hours) as actual_rate,
        variance - usage_variance as rate_variance,
        usage_variance,
        effective_mfu(gpu_hours_at_peak, training_tokens, training_tokens, estimated_gpu_hours)
            as estimated_effective_mfu,
        -- The MFU and throughput the actual GPU-hours imply, to calibrate the next estimate
        -- (mfu = actual_effective_mfu with overhead 0 reproduces them). They take the planned
        -- tokens as trained, so they exist only once the budget window has ended.
        if(elapsed = 1, effective_mfu(gpu_hours_at_peak, training_tokens, training_tokens, actual_gpu_hours), null)
            as actual_effective_mfu,
        if(elapsed = 1, decimal_divide(training_tokens, actual_gpu_hours * 3600), null)
            as actual_tokens_per_gpu_second,
        as_of,
        as_of_by_source
    from variances
)

select * from final
order by training_run, cost_category = 'total', cost_category;

-- name: totals
-- The `total` row of every run's budget variance.
select training_run, estimated_cost, actual_cost, variance, status
from budget_variance
where cost_category = 'total'
order by training_run;

-- name: currency_mismatches
-- Budgeted runs with allocations billed in another currency than their budget's. RunLedger does
-- not convert currencies, so budget_variance is not built while any row is returned.
with baselines as (
    select distinct training_run, currency, budget_file from budget_baselines
),

allocations as (
    select distinct training_run, BillingCurrency
    from cost_allocations
    where training_run is not null and BillingCurrency is not null
),

final as (
    select
        baselines.training_run,
        baselines.budget_file,
        baselines.currency as budget_currency,
        string_agg(allocations.BillingCurrency, ', ' order by allocations.BillingCurrency)
            as billing_currencies
    from baselines
    inner join allocations
        on allocations.training_run = baselines.training_run
        and allocations.BillingCurrency <> baselines.currency
    group by baselines.training_run, baselines.budget_file, baselines.currency
)

select * from final
order by training_run;

-- name: count
-- Rows of budget_variance.
select count(*) from budget_variance;
