-- budget_alerts of kind `cost`, inserted after the shared parts of sql/marts/budget_alerts.sql.

-- Kind cost: for every budgeted run and threshold (warning, over), the first UTC charge day at
-- whose end the run's cumulative effective spend (all billing periods, every category) reached
-- threshold x the run's total estimate: the same comparison as the status of budget_variance's
-- total row.
insert into budget_alerts by name
with thresholds as (
    select training_run, currency, estimated_cost, 'warning' as threshold,
        thresholds.warning as threshold_fraction
    from budget_alert_plans
    union all
    select training_run, currency, estimated_cost, 'over' as threshold,
        -- "over" is a DuckDB keyword naming a struct field: it stays quoted
        thresholds."over" as threshold_fraction  -- noqa: RF06
    from budget_alert_plans
),

crossings as (
    select
        thresholds.*,
        cumulative_spend.charge_day,
        cumulative_spend.cumulative_cost,
        cumulative_spend.as_of
    from thresholds
    inner join budget_alert_spend as cumulative_spend on thresholds.training_run = cumulative_spend.training_run
    where cumulative_spend.cumulative_cost >= thresholds.estimated_cost * thresholds.threshold_fraction
        and cumulative_spend.cumulative_cost > 0
        and cumulative_spend.charge_day < cumulative_spend.as_of
),

alerts as (
    select
        crossings.training_run,
        crossings.threshold,
        crossings.threshold_fraction,
        crossings.estimated_cost,
        round(crossings.estimated_cost * crossings.threshold_fraction, 10) as threshold_amount,
        min(crossings.charge_day) as crossed_on,
        arg_min(crossings.cumulative_cost, crossings.charge_day) as cumulative_cost,
        crossings.currency,
        crossings.as_of,
        'cost' as kind,
        crossings.currency as unit,
        arg_min(crossings.cumulative_cost, crossings.charge_day) as observed
    from crossings
    group by all
),

final as (
    select
        *,
        budget_alert_detail(
            training_run, kind, observed, unit, threshold, threshold_amount, threshold_fraction, crossed_on
        ) as detail
    from alerts
)

select * from final;
