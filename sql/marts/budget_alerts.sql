-- budget_alerts: the first day each run's cumulative spend, GPU-hours, wall-clock or storage spend
-- reached a threshold, the days far above a run's trailing median (or, beyond runs, a cost
-- category's or an account and service's unattributed spend), and idle GPU instances.
--
-- Rebuilt by its build in one transaction: `delete`, the shared parts (`plans`, `spend`, `levels`,
-- `detail`, `anomalies`, `daily` and `crossings`: temp tables and temp macros of the build's
-- connection), then one file per alert kind in sql/marts/budget_alerts/ (ALERT_KINDS in
-- pipelines/budgets/tables.py): `cost`, `idle_gpus` and `spend_anomaly` (the organisation's
-- series) insert their alerts, `gpu_hours` and `storage` their daily amounts (`daily`),
-- `wall_clock` and `daily_spend_anomaly` their crossings (`crossings`); last
-- `cumulative_crossings` (the first day each daily kind's cumulative amount reached a level) and
-- `run_crossings` (a run's crossings with its cumulative cost, as_of and detail). Only days from
-- a run's first own usage to the day before its as_of count (macros run_day_parts and run_as_of).
-- A run that never reached a threshold has no row for it; a crossing stays recorded when later
-- credits bring the spend back below it.
-- The kinds are described in docs/semantics.md#alerts; their configured parameters are bound:
-- $anomaly_trailing_days, $anomaly_minimum_days, $anomaly_warning, $anomaly_over,
-- $idle_warning_hours and $idle_over_hours. as_of is the run's (run_as_of), for an idle GPU and
-- the organisation's series the newest of any source.

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
        any_value(daily_spend_anomaly_thresholds) as daily_spend_anomaly_thresholds,
        any_value(low_gpu_utilization_thresholds) as low_gpu_utilization_thresholds,
        any_value(data_loading_share_thresholds) as data_loading_share_thresholds
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

-- name: anomalies
-- daily_spend_anomalies(days_table, levels_table, trailing_days, minimum_days): the one rule of
-- every daily_spend_anomaly series, a run's or beyond a run. days_table: one row per (series,
-- charge_day) with spend: its day_cost and the amount the day is judged by (observed: day_cost, or
-- less what the series leaves out that day); levels_table: per series its levels (threshold,
-- threshold_fraction). A day is anomalous at a level when observed >= round(its series' median
-- day_cost over the trailing_days calendar days before it x threshold_fraction, 10), once at least
-- minimum_days of them had spend and that median is above 0.
create or replace temp macro daily_spend_anomalies(days_table, levels_table, trailing_days, minimum_days) as table
with days as (
    select series, charge_day, day_cost, observed from query_table(days_table)
),

medians as (
    select
        days.series,
        days.charge_day,
        days.day_cost,
        days.observed,
        median(earlier_days.day_cost) as trailing_median,
        count(*) as history_days
    from days
    inner join days as earlier_days
        on days.series = earlier_days.series
        and earlier_days.charge_day >= days.charge_day - trailing_days
        and earlier_days.charge_day < days.charge_day
    group by days.series, days.charge_day, days.day_cost, days.observed
),

final as (
    select
        medians.series,
        medians.charge_day,
        medians.day_cost,
        medians.observed,
        levels.threshold,
        levels.threshold_fraction,
        round(medians.trailing_median * levels.threshold_fraction, 10) as threshold_amount
    from medians
    inner join query_table(levels_table) as levels on medians.series = levels.series
    where medians.history_days >= minimum_days
        and medians.trailing_median > 0
        and medians.observed >= round(medians.trailing_median * levels.threshold_fraction, 10)
)

select * from final;

-- name: daily
-- The daily amounts of the kinds measured cumulatively (gpu_hours, storage) per run and UTC day.
create or replace temp table budget_alert_daily (
    training_run varchar,
    kind varchar,
    charge_day date,
    amount decimal(38, 10)
);

-- name: crossings
-- The crossings of a run's levels of the kinds besides cost, before `run_crossings` inserts them.
create or replace temp table budget_alert_crossings (
    training_run varchar,
    currency varchar,
    estimated_cost decimal(38, 10),
    kind varchar,
    unit varchar,
    threshold varchar,
    threshold_fraction decimal(38, 10),
    threshold_amount decimal(38, 10),
    crossed_on date,
    observed decimal(38, 10)
);

-- name: cumulative_crossings
-- The first UTC day at whose end a run's cumulative amount of a daily kind reached its level.
insert into budget_alert_crossings by name
with daily as (
    select * from budget_alert_daily
),

cumulative as (
    select
        training_run,
        kind,
        charge_day,
        sum(amount) over (partition by training_run, kind order by charge_day) as observed
    from daily
),

final as (
    select
        levels.* exclude (plan),
        round(levels.plan * levels.threshold_fraction, 10) as threshold_amount,
        min(cumulative.charge_day) as crossed_on,
        arg_min(cumulative.observed, cumulative.charge_day) as observed
    from budget_alert_levels as levels
    inner join cumulative on levels.training_run = cumulative.training_run and levels.kind = cumulative.kind
    where cumulative.observed >= round(levels.plan * levels.threshold_fraction, 10)
        and cumulative.observed > 0
    group by all
)

select * from final;

-- name: run_crossings
-- Every crossing of a run's levels besides cost, with the run's cumulative effective cost at the
-- end of the crossing day, its as_of and the alert's line of text.
insert into budget_alerts by name
with crossings as (
    select * from budget_alert_crossings
),

costs as (
    select
        crossings.*,
        coalesce(cumulative_spend.cumulative_cost, 0) as cumulative_cost
    from crossings
    asof left join budget_alert_spend as cumulative_spend
        on crossings.training_run = cumulative_spend.training_run
        and crossings.crossed_on >= cumulative_spend.charge_day
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
