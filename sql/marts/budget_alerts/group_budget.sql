-- budget_alerts of kind `group_budget`, inserted after the shared parts of sql/marts/budget_alerts.sql.

-- Kind group_budget: for every group budget, period and threshold (warning, over), the first UTC
-- charge day at whose end the scope's cumulative effective spend in the period (every category,
-- group_budget_days) reached threshold x the budget's total amount for the period: the comparison
-- of group_budget_variance's total row. Only days before the period's as_of count, as for a run's
-- cost alert. training_run is NULL; scope_kind, scope and period name the budget.
insert into budget_alerts by name
with budgets as (
    select
        budget_file,
        any_value(currency) as currency,
        any_value(thresholds) as thresholds,
        sum(amount) as estimated_cost
    from group_budgets
    group by budget_file
),

daily as (
    select
        budget_file, scope_kind, scope, period, charge_day, any_value(as_of) as as_of, sum(effective_cost) as day_cost
    from group_budget_days()
    group by budget_file, scope_kind, scope, period, charge_day
),

cumulative as (
    select
        *,
        sum(day_cost) over (partition by budget_file, period order by charge_day) as cumulative_cost
    from daily
),

thresholds as (
    select budget_file, currency, estimated_cost, 'warning' as threshold, thresholds['warning'] as threshold_fraction
    from budgets
    union all
    select budget_file, currency, estimated_cost, 'over' as threshold, thresholds['over'] as threshold_fraction
    from budgets
),

crossings as (
    select
        thresholds.*,
        cumulative.scope_kind,
        cumulative.scope,
        cumulative.period,
        cumulative.charge_day,
        cumulative.cumulative_cost,
        cumulative.as_of
    from thresholds
    inner join cumulative on thresholds.budget_file = cumulative.budget_file
    where cumulative.cumulative_cost >= thresholds.estimated_cost * thresholds.threshold_fraction
        and cumulative.cumulative_cost > 0
        and cumulative.charge_day < cumulative.as_of
),

alerts as (
    select
        scope_kind,
        scope,
        period,
        threshold,
        threshold_fraction,
        estimated_cost,
        round(estimated_cost * threshold_fraction, 10) as threshold_amount,
        min(charge_day) as crossed_on,
        arg_min(cumulative_cost, charge_day) as cumulative_cost,
        currency,
        any_value(as_of) as as_of,
        'group_budget' as kind,
        currency as unit,
        arg_min(cumulative_cost, charge_day) as observed
    from crossings
    group by budget_file, scope_kind, scope, period, threshold, threshold_fraction, estimated_cost, currency
),

final as (
    select
        *,
        budget_alert_detail(
            format('{} {} ({})', scope_kind, scope, period),
            kind,
            observed,
            unit,
            threshold,
            threshold_amount,
            threshold_fraction,
            crossed_on
        ) as detail
    from alerts
)

select * from final;
