-- budget_alerts: the first day each run's cumulative spend, GPU-hours, wall-clock or storage spend
-- reached a threshold, the days far above a run's trailing median, and idle GPU instances.
--
-- Rebuilt by its build in one transaction: `delete`, the shared parts (`plans`, `spend`, `levels`
-- and `detail`: temp tables and a temp macro of the build's connection), then one statement per
-- alert kind: `cost`, `gpu_hours`, `wall_clock`, `storage`, `daily_spend_anomaly`, `idle_gpus`
-- (ALERT_KINDS in pipelines/budgets/tables.py). Only days from a run's first own usage to the day
-- before its as_of count (macros run_day_parts and run_as_of). A run that never reached a threshold
-- has no row for it; a crossing stays recorded when later credits bring the spend back below it.
-- The kinds are described in docs/semantics.md#alerts; their configured parameters are bound:
-- $anomaly_trailing_days, $anomaly_minimum_days, $idle_warning_hours and $idle_over_hours. as_of
-- is the run's (run_as_of), for an idle GPU the newest of any source.

-- name: delete
-- Empties budget_alerts: every kind's statement inserts its rows again.
delete from budget_alerts;

-- name: plans
-- Per budgeted run the plans the kinds are fractions of, with the run's levels of each kind.
create or replace temp table budget_alert_plans as
with baselines as (
    select * from budget_baselines
),

final as (
    select
        training_run,
        any_value(currency) as currency,
        any_value(thresholds) as thresholds,
        sum(estimated_cost) as estimated_cost,
        max(estimated_gpu_hours) as estimated_gpu_hours,
        max(estimated_wall_clock_hours) as estimated_wall_clock_hours,
        sum(estimated_cost) filter (where cost_category = 'storage') as storage_estimate,
        any_value(gpu_hours_thresholds) as gpu_hours_thresholds,
        any_value(wall_clock_thresholds) as wall_clock_thresholds,
        any_value(storage_thresholds) as storage_thresholds,
        any_value(daily_spend_anomaly_thresholds) as daily_spend_anomaly_thresholds
    from baselines
    group by training_run
)

select * from final;

-- name: spend
-- Each budgeted run's cumulative effective spend per charge day: every allocation spread over its
-- charge period by day (run_day_parts), the run's days from its first own usage up to its as_of
-- (spend charged before, a month's fees say, counts on that first day).
create or replace temp table budget_alert_spend as
with day_parts as (
    select * from run_day_parts()
),

runs_as_of as (
    select * from run_as_of()
),

daily_spend as (
    select
        day_parts.training_run,
        day_parts.charge_day,
        day_parts.first_usage_day,
        runs_as_of.as_of,
        sum(day_parts.effective_cost) as day_cost
    from day_parts
    inner join runs_as_of on day_parts.training_run = runs_as_of.training_run
    where day_parts.training_run in (select training_run from budget_alert_plans)
    group by all
),

final as (
    select
        training_run,
        charge_day,
        as_of,
        sum(day_cost) over (partition by training_run order by charge_day) as cumulative_cost
    from daily_spend
    qualify charge_day >= first_usage_day
)

select * from final;

-- name: levels
-- The levels of the kinds gpu_hours, wall_clock and storage per run and threshold: a fraction of
-- the run's plan of the kind (estimated GPU-hours, planned wall-clock hours, the storage estimate).
create or replace temp table budget_alert_levels as
with kind_plans as (
    select training_run, currency, estimated_cost, 'gpu_hours' as kind, 'GPU-hours' as unit,
        estimated_gpu_hours as plan, gpu_hours_thresholds as levels
    from budget_alert_plans
    union all
    select training_run, currency, estimated_cost, 'wall_clock' as kind, 'hours' as unit,
        estimated_wall_clock_hours as plan, wall_clock_thresholds as levels
    from budget_alert_plans
    union all
    select training_run, currency, estimated_cost, 'storage' as kind, currency as unit,
        storage_estimate as plan, storage_thresholds as levels
    from budget_alert_plans
),

final as (
    select
        kind_plans.training_run,
        kind_plans.currency,
        kind_plans.estimated_cost,
        kind_plans.kind,
        kind_plans.unit,
        kind_plans.plan,
        threshold_names.threshold,
        case threshold_names.threshold
            when 'warning' then kind_plans.levels.warning
            -- "over" is a DuckDB keyword naming a struct field: it stays quoted
            else kind_plans.levels."over"  -- noqa: RF06
        end as threshold_fraction
    from kind_plans
    cross join (values ('warning'), ('over')) as threshold_names (threshold)
    where kind_plans.plan > 0 and kind_plans.levels is not null
)

select * from final;

-- name: detail
-- The one line of text of an alert: what was crossed, when, against which level.
create or replace temp macro budget_alert_detail(
    subject, alert_kind, alert_observed, alert_unit, alert_threshold, alert_amount, alert_fraction, alert_day
) as format(
    '{} {}: {} {} reached the {} level {} {}{}',
    subject,
    alert_kind,
    cast(round(alert_observed, 2) as varchar),
    alert_unit,
    alert_threshold,
    cast(round(alert_amount, 2) as varchar),
    alert_unit,
    case
        when alert_kind = 'daily_spend_anomaly' then format(
            ' on {}, {} x the trailing median', alert_day, cast(round(alert_fraction, 2) as varchar)
        )
        else format(' on {}', alert_day)
    end
);

-- name: cost
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

-- name: gpu_hours
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

-- name: wall_clock
-- Kind wall_clock: the UTC day the run's wall-clock, from its first start (or resume) to its
-- latest event (its end once it ended), reached its level.
insert into budget_alerts by name
with run_clocks as (
    select
        training_run,
        min(event_time) filter (where event in ('start', 'resume')) as first_start,
        max(event_time) as clock_end
    from run_events
    group by training_run
),

crossings as (
    select
        levels.*,
        round(levels.plan * levels.threshold_fraction, 10) as threshold_amount,
        run_clocks.first_start
        + to_microseconds(cast(round(levels.plan * levels.threshold_fraction * 3600000000) as bigint))
            as crossed_at,
        run_clocks.first_start,
        run_clocks.clock_end
    from budget_alert_levels as levels
    inner join run_clocks on levels.training_run = run_clocks.training_run
    where levels.kind = 'wall_clock' and run_clocks.first_start is not null
),

alerts as (
    select
        crossings.* exclude (crossed_at, first_start, clock_end, plan),
        cast(crossings.crossed_at as date) as crossed_on,
        decimal_divide(
            date_diff(
                'second',
                crossings.first_start,
                least(crossings.clock_end, cast(cast(crossings.crossed_at as date) + 1 as timestamp))
            ),
            3600
        ) as observed
    from crossings
    where crossings.crossed_at <= crossings.clock_end
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

-- name: storage
-- Kind storage: the first UTC charge day at whose end the run's cumulative storage spend (spread by
-- day, run_day_parts) reached its level.
insert into budget_alerts by name
with daily as (
    select
        training_run,
        charge_day,
        sum(effective_cost) as day_storage_cost
    from run_day_parts()
    where cost_category = 'storage' and training_run in (select training_run from budget_alert_plans)
    group by all
),

cumulative as (
    select
        training_run,
        charge_day,
        sum(day_storage_cost) over (partition by training_run order by charge_day) as observed
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
    where levels.kind = 'storage'
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

-- name: daily_spend_anomaly
-- Kind daily_spend_anomaly: a day's spend of lines a day long or shorter (usage, not month-long
-- fees) against the median of the run's such days among the $anomaly_trailing_days calendar days
-- before it; from the run's first day with GPU-hours on (data preparation before training is no
-- baseline for training).
insert into budget_alerts by name
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

alerts as (
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
),

-- the run's cumulative effective cost at the end of the anomalous day
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

-- name: idle_gpus
-- Kind idle_gpus: GPU-instance hours charged with no run, in stretches of back-to-back charge
-- periods; the first day a stretch of the instance was longer than a level ($idle_warning_hours,
-- $idle_over_hours).
insert into budget_alerts by name
with idle_periods as (
    select
        ResourceId as resource_id,
        BillingCurrency as currency,
        ChargePeriodStart as period_start,
        ChargePeriodEnd as period_end,
        sum(effective_cost) as period_cost
    from cost_allocations
    where training_run is null and gpu_hours > 0 and ResourceId is not null
    group by all
),

idle_stretches as (
    select
        *,
        sum(case when previous_end >= period_start then 0 else 1 end)
            over (partition by resource_id, currency order by period_start) as stretch
    from (
        select
            *,
            lag(period_end) over (partition by resource_id, currency order by period_start) as previous_end
        from idle_periods
    ) as idle_with_previous
),

idle_cumulative as (
    select
        resource_id,
        currency,
        stretch,
        period_start,
        decimal_divide(
            sum(date_diff('second', period_start, period_end))
                over (partition by resource_id, currency, stretch order by period_start),
            3600
        ) as idle_hours,
        sum(period_cost) over (partition by resource_id, currency, stretch order by period_start) as idle_cost
    from idle_stretches
),

idle_levels as (
    select 'warning' as threshold, cast($idle_warning_hours as decimal(38, 10)) as threshold_fraction
    union all
    select 'over' as threshold, cast($idle_over_hours as decimal(38, 10)) as threshold_fraction
),

alerts as (
    select
        null as training_run,
        idle_levels.threshold,
        idle_levels.threshold_fraction,
        null as estimated_cost,
        idle_levels.threshold_fraction as threshold_amount,
        cast(min(idle_cumulative.period_start) as date) as crossed_on,
        arg_min(idle_cumulative.idle_cost, idle_cumulative.period_start) as cumulative_cost,
        idle_cumulative.currency,
        'idle_gpus' as kind,
        'hours' as unit,
        arg_min(idle_cumulative.idle_hours, idle_cumulative.period_start) as observed,
        idle_cumulative.resource_id
    from idle_cumulative
    cross join idle_levels
    where idle_cumulative.idle_hours > idle_levels.threshold_fraction
    group by
        idle_cumulative.resource_id, idle_cumulative.currency, idle_levels.threshold, idle_levels.threshold_fraction
),

-- an idle GPU's as_of: the newest of any source
final as (
    select
        alerts.*,
        sources_as_of.as_of,
        budget_alert_detail(
            alerts.resource_id,
            alerts.kind,
            alerts.observed,
            alerts.unit,
            alerts.threshold,
            alerts.threshold_amount,
            alerts.threshold_fraction,
            alerts.crossed_on
        ) as detail
    from alerts
    cross join (select max(as_of) as as_of from source_as_of()) as sources_as_of
)

select * from final;

-- name: summary
-- The cost threshold crossings `runledger run` lists after its summary, money rounded to cents.
select
    training_run,
    threshold,
    crossed_on,
    round(threshold_amount, 2) as threshold_amount,
    round(cumulative_cost, 2) as cumulative_cost,
    currency
from budget_alerts
where coalesce(kind, 'cost') = 'cost'
order by crossed_on, training_run, threshold_fraction;

-- name: kind_crossings
-- The crossings of the threshold kinds besides cost, for their asset checks.
select kind, threshold, detail
from budget_alerts
where kind <> 'cost'
order by kind, crossed_on, training_run, resource_id, threshold_fraction;

-- name: count
-- Rows of budget_alerts.
select count(*) from budget_alerts;
