-- group_budget_variance: each group budget's scope's actual spend against its amount, per period.

-- name: insert
-- Rebuilds group_budget_variance: per group budget and period (a monthly budget's every billing
-- period with spend in its scope, from its from_period on; a window budget's window), one row per
-- budgeted cost category and one row cost_category = 'total' (the amount given as one number, or
-- the categories' sum, against every category's spend). The spend is the macro group_budget_days'
-- (every allocation carrying the scope's value) and its as_of (else, a window without spend, the
-- newest of any source); elapsed: the fraction of the
-- period's days [start, end) behind it, clamped to [0, 1]. The status is the run budgets' rule
-- (macro budget_status) against the amount pro rata to elapsed; the forecast at completion is the
-- actual / elapsed, the actual once the period has ended. Every amount is DECIMAL(38, 10);
-- quotients come from decimal_divide.
delete from group_budget_variance;

insert into group_budget_variance by name
with budgets as (
    select * from group_budgets
),

days as (
    select * from group_budget_days()
),

sources_as_of as (
    select * from source_as_of()
),

budget_totals as (
    select
        budget_file,
        any_value(scope_kind) as scope_kind,
        any_value(scope) as scope,
        any_value(period_kind) as period_kind,
        any_value("window") as budget_window,
        any_value(currency) as currency,
        any_value(thresholds) as thresholds,
        sum(amount) as total_amount
    from budgets
    group by budget_file
),

periods as (
    select
        budget_file,
        strftime(budget_window['start'], '%Y-%m-%d') as period,
        budget_window['start'] as period_start,
        budget_window['end'] as period_end
    from budget_totals
    where period_kind = 'window'
    union
    select distinct budget_file, period, period_start, period_end
    from days
),

period_as_of as (
    select
        periods.budget_file,
        periods.period,
        any_value(periods.period_start) as period_start,
        any_value(periods.period_end) as period_end,
        coalesce(any_value(days.as_of), (select max(as_of) from sources_as_of)) as as_of
    from periods
    left join days on periods.budget_file = days.budget_file and periods.period = days.period
    group by periods.budget_file, periods.period
),

period_elapsed as (
    select
        *,
        case
            when as_of is null then cast(0 as decimal(38, 10))
            else decimal_divide(
                greatest(0, least(
                    date_diff('second', cast(period_start as timestamp), cast(period_end as timestamp)),
                    date_diff('second', cast(period_start as timestamp), as_of)
                )),
                date_diff('second', cast(period_start as timestamp), cast(period_end as timestamp))
            )
        end as elapsed
    from period_as_of
),

budget_lines as (
    select budget_file, cost_category, amount from budgets
    where cost_category <> 'total'
    union all
    select budget_file, 'total' as cost_category, total_amount as amount from budget_totals
),

actuals as (
    select budget_file, period, cost_category, sum(effective_cost) as actual_cost
    from days
    group by budget_file, period, cost_category
    union all
    select budget_file, period, 'total' as cost_category, sum(effective_cost) as actual_cost
    from days
    group by budget_file, period
),

amounts as (
    select
        budget_totals.scope_kind,
        budget_totals.scope,
        period_elapsed.period,
        budget_totals.currency,
        budget_lines.cost_category,
        budget_lines.amount as estimated_cost,
        coalesce(actuals.actual_cost, cast(0 as decimal(38, 10))) as actual_cost,
        budget_totals.thresholds,
        period_elapsed.elapsed,
        period_elapsed.as_of,
        period_elapsed.budget_file
    from period_elapsed
    inner join budget_totals on period_elapsed.budget_file = budget_totals.budget_file
    inner join budget_lines on period_elapsed.budget_file = budget_lines.budget_file
    left join actuals
        on period_elapsed.budget_file = actuals.budget_file
        and period_elapsed.period = actuals.period
        and budget_lines.cost_category = actuals.cost_category
),

final as (
    select
        scope_kind,
        scope,
        period,
        currency,
        cost_category,
        estimated_cost,
        actual_cost,
        actual_cost - estimated_cost as variance,
        decimal_divide(actual_cost - estimated_cost, estimated_cost) as variance_pct,
        budget_status(
            estimated_cost,
            actual_cost,
            estimated_cost * thresholds['warning'],
            estimated_cost * thresholds['over'],
            round(estimated_cost * elapsed, 10),
            elapsed = 1
        ) as status,
        if(elapsed = 1, actual_cost, decimal_divide(actual_cost, elapsed)) as forecast_at_completion,
        elapsed,
        as_of,
        budget_file
    from amounts
)

select * from final
order by scope_kind, scope, period, cost_category = 'total', cost_category;

-- name: totals
-- The `total` row of every group budget's periods.
select scope_kind, scope, period, estimated_cost, actual_cost, variance, status, currency
from group_budget_variance
where cost_category = 'total'
order by scope_kind, scope, period;

-- name: currency_mismatches
-- Group budgets whose scope has spend billed in another currency than the budget's. RunLedger does
-- not convert currencies, so group_budget_variance is not built while any row is returned.
with budgets as (
    select distinct budget_file, scope_kind, scope, currency from group_budgets
),

days as (
    select distinct budget_file, currency from group_budget_days()
    where currency is not null
),

final as (
    select
        budgets.budget_file,
        budgets.currency as budget_currency,
        budgets.scope_kind,
        budgets.scope,
        string_agg(days.currency, ', ' order by days.currency) as billing_currencies
    from budgets
    inner join days on budgets.budget_file = days.budget_file and days.currency <> budgets.currency
    group by budgets.budget_file, budgets.currency, budgets.scope_kind, budgets.scope
)

select * from final
order by budget_file;

-- name: known_values
-- Every value of each dimension a group budget may scope, as the allocations carry it
-- (`runledger check` lists them for a scope that matches none): the four
-- built-in columns, the cluster, and each key of custom_dimensions.
with allocations as (
    select experiment, owner, dataset_version, cluster, custom_dimensions from cost_allocations
),

dimension_values as (
    select 'experiment' as scope_kind, experiment as scope from allocations
    union
    select 'owner', owner from allocations
    union
    select 'dataset_version', dataset_version from allocations
    union
    select 'cluster', cluster from allocations
    union
    select custom.key, custom.value
    from (select unnest(map_entries(custom_dimensions)) as custom from allocations) as customs
),

final as (
    select scope_kind, scope from dimension_values
    where scope is not null
)

select * from final
order by scope_kind, scope;

-- name: count
-- Rows of group_budget_variance.
select count(*) from group_budget_variance;
