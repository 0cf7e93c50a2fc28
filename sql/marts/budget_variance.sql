-- budget_variance: actual spend against each run's baseline.

-- name: insert
-- Rebuilds budget_variance: every budgeted run's actual (effective) spend against its baseline,
-- one row per cost category found in the baseline or in the run's allocations (all billing
-- periods), plus one row cost_category = 'total'. Runs without a baseline are left out.
-- $elastic_categories: the categories whose spend is elastic where the baseline has no line of
-- them (pipelines.budgets.schema.cost_behavior).
-- Uses the macros decimal_divide and effective_mfu (sql/schema/macros.sql), created with the schema.
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

-- as_of is the data's "now": the latest ChargePeriodEnd in cost_allocations, over every run and
-- unattributed spend alike. It is not the wall clock, so a rebuild from the same data gives the
-- same table. NULL while cost_allocations is empty, and then no time of any window has elapsed.
data_as_of as (
    select max(ChargePeriodEnd) as as_of from allocations
),

runs as (
    select
        training_run,
        any_value(currency) as currency,
        any_value(thresholds) as thresholds,
        any_value("window") as budget_window
    from baselines
    group by training_run
),

run_windows as (
    select
        runs.*,
        data_as_of.as_of,
        cast(runs.budget_window['start'] as timestamp) as window_start,
        cast(runs.budget_window['end'] as timestamp) as window_end
    from runs
    cross join data_as_of
),

-- elapsed: the fraction of the run's window [start, end) behind as_of, clamped to [0, 1].
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
        end as actual_gpu_hours
    from run_categories
    left join baselines
        on baselines.training_run = run_categories.training_run
        and baselines.cost_category = run_categories.cost_category
    left join actuals
        on actuals.training_run = run_categories.training_run
        and actuals.cost_category = run_categories.cost_category
),

total_amounts as (
    select
        training_run,
        'total' as cost_category,
        sum(estimated_cost) as estimated_cost,
        sum(actual_cost) as actual_cost
    from category_amounts
    group by training_run
),

amounts as (
    select * from category_amounts
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
        run_elapsed.currency,
        run_elapsed.elapsed,
        run_elapsed.as_of,
        amounts.actual_cost - amounts.estimated_cost as variance,
        round(
            (amounts.actual_gpu_hours - amounts.estimated_gpu_hours) * amounts.estimated_rate, 10
        ) as usage_variance,
        amounts.estimated_cost * run_elapsed.thresholds['over'] as over_from,
        amounts.estimated_cost * run_elapsed.thresholds['warning'] as warning_from,
        -- under: more than 10 % below the pro-rata burn of the estimate
        round(amounts.estimated_cost * run_elapsed.elapsed, 10) * cast(0.9 as decimal(2, 1))
            as under_below
    from amounts
    inner join run_elapsed on run_elapsed.training_run = amounts.training_run
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
        case
            when estimated_cost = 0 then if(actual_cost > 0, 'over', 'on_track')
            when actual_cost >= over_from then 'over'
            when actual_cost >= warning_from then 'warning'
            when actual_cost < under_below then 'under'
            else 'on_track'
        end as status,
        -- linear burn over the window; NULL while no time of it has elapsed
        decimal_divide(actual_cost, elapsed) as forecast_at_completion,
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
        as_of
    from variances
)

select * from final;

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
