-- budget_alerts of kind `gpu_hours`, inserted after the shared parts of sql/marts/budget_alerts.sql.

-- Kind gpu_hours: the first UTC charge day at whose end the run's cumulative GPU-hours (of its
-- hourly usage lines) reached its level.
insert into budget_alerts by name
with daily as (
    select
        training_run,
        cast(coalesce(ChargePeriodStart, BillingPeriodStart) as date) as charge_day,
        sum(gpu_hours) as day_gpu_hours
    from cost_allocations
    where training_run in (select training_run from budget_alert_plans)
    group by all
),

cumulative as (
    select
        training_run,
        charge_day,
        sum(day_gpu_hours) over (partition by training_run order by charge_day) as observed
    from daily
),

alerts as (
    select
        levels.* exclude (plan),
        round(levels.plan * levels.threshold_fraction, 10) as threshold_amount,
        min(cumulative.charge_day) as crossed_on,
        arg_min(cumulative.observed, cumulative.charge_day) as observed
    from budget_alert_levels as levels
    inner join cumulative on levels.training_run = cumulative.training_run
    where levels.kind = 'gpu_hours'
        and cumulative.observed >= round(levels.plan * levels.threshold_fraction, 10)
        and cumulative.observed > 0
    group by all
),

-- the run's cumulative effective cost at the end of the crossing day
costs as (
    select
        alerts.*,
        coalesce(cumulative_spend.cumulative_cost, 0) as cumulative_cost
    from alerts
    asof left join budget_alert_spend as cumulative_spend
        on alerts.training_run = cumulative_spend.training_run
        and alerts.crossed_on >= cumulative_spend.charge_day
),

final as (
    select
        costs.*,
        coalesce(runs_as_of.as_of, sources_as_of.as_of) as as_of,
        budget_alert_detail(
            costs.training_run,
            costs.kind,
            costs.observed,
            costs.unit,
            costs.threshold,
            costs.threshold_amount,
            costs.threshold_fraction,
            costs.crossed_on
        ) as detail
    from costs
    left join run_as_of() as runs_as_of on costs.training_run = runs_as_of.training_run
    cross join (select max(as_of) as as_of from source_as_of()) as sources_as_of
)

select * from final;
