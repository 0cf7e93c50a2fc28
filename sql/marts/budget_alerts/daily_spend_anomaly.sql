-- budget_alerts of kind `daily_spend_anomaly`: its crossings, which the shared `run_crossings` inserts.

-- Kind daily_spend_anomaly: a day's spend of lines a day long or shorter (usage, not month-long
-- fees) against the median of the run's such days among the $anomaly_trailing_days calendar days
-- before it (daily_spend_anomalies); from the run's first day with GPU-hours on (data preparation
-- before training is no baseline for training).
insert into budget_alert_crossings by name
with usage_days as (
    select
        training_run,
        cast(ChargePeriodStart as date) as charge_day,
        sum(effective_cost) as day_cost,
        sum(gpu_hours) as day_gpu_hours
    from cost_allocations
    where training_run in (select training_run from budget_alert_plans)
        and ChargePeriodEnd <= ChargePeriodStart + interval 1 day
    group by training_run, charge_day
),

anomaly_days as (  -- noqa: ST03
    select training_run as series, charge_day, day_cost, day_cost as observed
    from (
        select
            *,
            min(charge_day) filter (where day_gpu_hours > 0) over (partition by training_run) as first_gpu_day
        from usage_days
    ) as days_from_gpus
    where first_gpu_day is null or charge_day >= first_gpu_day
),

anomaly_levels as (  -- noqa: ST03
    select
        plans.training_run as series,
        threshold_names.threshold,
        case threshold_names.threshold
            when 'warning' then plans.daily_spend_anomaly_thresholds.warning
            else plans.daily_spend_anomaly_thresholds."over"  -- noqa: RF06
        end as threshold_fraction
    from budget_alert_plans as plans
    cross join (values ('warning'), ('over')) as threshold_names (threshold)
),

anomalies as (
    select *
    from daily_spend_anomalies(
        anomaly_days,
        anomaly_levels,
        cast($anomaly_trailing_days as integer),
        cast($anomaly_minimum_days as integer)
    )
),

final as (
    select
        plans.training_run,
        anomalies.threshold,
        anomalies.threshold_fraction,
        plans.estimated_cost,
        anomalies.threshold_amount,
        anomalies.charge_day as crossed_on,
        plans.currency,
        'daily_spend_anomaly' as kind,
        plans.currency as unit,
        anomalies.observed
    from anomalies
    inner join budget_alert_plans as plans on anomalies.series = plans.training_run
)

select * from final;
