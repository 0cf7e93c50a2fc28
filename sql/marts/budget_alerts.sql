-- budget_alerts: the first day each run's cumulative spend reached a threshold.

-- name: insert
-- Rebuilds budget_alerts: for every budgeted run and threshold (warning, over), the first UTC
-- charge day at whose end the run's cumulative effective spend (all billing periods, every
-- category, spread by day over each charge period) reached threshold x the run's total estimate:
-- the same comparison as the status of budget_variance's total row. Only days from the run's first
-- own usage to the day before its as_of count (macros run_day_parts and run_as_of). A run that
-- never reached a threshold has no row for it; a crossing stays recorded when later credits bring
-- the cumulative spend back below the threshold.
delete from budget_alerts;

insert into budget_alerts by name
with baselines as (
    select * from budget_baselines
),

day_parts as (
    select * from run_day_parts()
),

runs_as_of as (
    select * from run_as_of()
),

budgets as (
    select
        training_run,
        any_value(currency) as currency,
        any_value(thresholds) as thresholds,
        sum(estimated_cost) as estimated_cost
    from baselines
    group by training_run
),

thresholds as (
    select training_run, currency, estimated_cost, 'warning' as threshold,
        thresholds.warning as threshold_fraction
    from budgets
    union all
    select training_run, currency, estimated_cost, 'over' as threshold,
        -- "over" is a DuckDB keyword naming a struct field: it stays quoted
        thresholds."over" as threshold_fraction  -- noqa: RF06
    from budgets
),

-- every allocation spread over its charge period by day (run_day_parts), each run's days from its
-- first own usage up to its as_of: spend charged before (a month's fees, say) counts on that first
-- day, and no threshold is crossed before the run used anything, nor on a day the data has not reached
daily_spend as (
    select
        day_parts.training_run,
        day_parts.charge_day,
        day_parts.first_usage_day,
        runs_as_of.as_of,
        sum(day_parts.effective_cost) as day_cost
    from day_parts
    inner join runs_as_of on day_parts.training_run = runs_as_of.training_run
    where day_parts.training_run in (select training_run from budgets)
    group by all
),

cumulative_spend as (
    select
        training_run,
        charge_day,
        as_of,
        sum(day_cost) over (partition by training_run order by charge_day) as cumulative_cost
    from daily_spend
    qualify charge_day >= first_usage_day and charge_day < as_of
),

crossings as (
    select
        thresholds.*,
        cumulative_spend.charge_day,
        cumulative_spend.cumulative_cost,
        cumulative_spend.as_of
    from thresholds
    inner join cumulative_spend on cumulative_spend.training_run = thresholds.training_run
    where cumulative_spend.cumulative_cost >= thresholds.estimated_cost * thresholds.threshold_fraction
        and cumulative_spend.cumulative_cost > 0
),

final as (
    select
        crossings.training_run,
        crossings.threshold,
        crossings.threshold_fraction,
        crossings.estimated_cost,
        round(crossings.estimated_cost * crossings.threshold_fraction, 10) as threshold_amount,
        min(crossings.charge_day) as crossed_on,
        arg_min(crossings.cumulative_cost, crossings.charge_day) as cumulative_cost,
        crossings.currency,
        crossings.as_of
    from crossings
    group by all
)

select * from final;

-- name: summary
-- The threshold crossings `runledger run` lists after its summary, money rounded to cents.
select
    training_run,
    threshold,
    crossed_on,
    round(threshold_amount, 2) as threshold_amount,
    round(cumulative_cost, 2) as cumulative_cost,
    currency
from budget_alerts
order by crossed_on, training_run, threshold_fraction;
