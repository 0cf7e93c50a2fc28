-- budget_alerts of kind `daily_spend_anomaly`: its crossings, which the shared `run_crossings` inserts.

-- Kind daily_spend_anomaly: a day's spend of lines a day long or shorter (usage, not month-long
-- fees) against the median of the run's such days among the $anomaly_trailing_days calendar days
-- before it; from the run's first day with GPU-hours on (data preparation before training is no
-- baseline for training).
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

anomaly_days as (
    select training_run, charge_day, day_cost
    from (
        select
            *,
            min(charge_day) filter (where day_gpu_hours > 0) over (partition by training_run) as first_gpu_day
        from usage_days
    ) as days_from_gpus
    where first_gpu_day is null or charge_day >= first_gpu_day
),

anomaly_medians as (
    select
        anomaly_days.training_run,
        anomaly_days.charge_day,
        anomaly_days.day_cost,
        median(earlier_days.day_cost) as trailing_median,
        count(*) as trailing_days
    from anomaly_days
    inner join anomaly_days as earlier_days
        on anomaly_days.training_run = earlier_days.training_run
        and earlier_days.charge_day >= anomaly_days.charge_day - cast($anomaly_trailing_days as integer)
        and earlier_days.charge_day < anomaly_days.charge_day
    group by anomaly_days.training_run, anomaly_days.charge_day, anomaly_days.day_cost
),

anomaly_levels as (
    select
        plans.training_run,
        plans.currency,
        plans.estimated_cost,
        threshold_names.threshold,
        case threshold_names.threshold
            when 'warning' then plans.daily_spend_anomaly_thresholds.warning
            else plans.daily_spend_anomaly_thresholds."over"  -- noqa: RF06
        end as threshold_fraction
    from budget_alert_plans as plans
    cross join (values ('warning'), ('over')) as threshold_names (threshold)
),

final as (
    select
        anomaly_levels.training_run,
        anomaly_levels.threshold,
        anomaly_levels.threshold_fraction,
        anomaly_levels.estimated_cost,
        round(anomaly_medians.trailing_median * anomaly_levels.threshold_fraction, 10) as threshold_amount,
        anomaly_medians.charge_day as crossed_on,
        anomaly_levels.currency,
        'daily_spend_anomaly' as kind,
        anomaly_levels.currency as unit,
        anomaly_medians.day_cost as observed
    from anomaly_medians
    inner join anomaly_levels on anomaly_medians.training_run = anomaly_levels.training_run
    where anomaly_medians.trailing_days >= cast($anomaly_minimum_days as integer)
        and anomaly_medians.trailing_median > 0
        and anomaly_medians.day_cost >= round(anomaly_medians.trailing_median * anomaly_levels.threshold_fraction, 10)
)

select * from final;
