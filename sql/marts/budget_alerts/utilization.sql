-- budget_alerts of kinds `low_gpu_utilization` and `data_loading_share`, inserted after the shared
-- parts of sql/marts/budget_alerts.sql: both judged on a budgeted run's hours of run_utilization.

-- Kind low_gpu_utilization: the run's hourly mean GPU utilization below a level; kind
-- data_loading_share: its hourly data-wait share above a level; each for at least the level's
-- `hours` consecutive hours (an hour without a value ends a stretch). One alert per run, kind and
-- level: its first such stretch, crossed on the day of its first hour, observed the stretch's mean.
insert into budget_alerts by name
with hours as (
    select training_run, hour, gpu_utilization, data_wait_share
    from run_utilization
),

levels as (
    select
        plans.training_run,
        plans.currency,
        plans.estimated_cost,
        kinds.kind,
        threshold_names.threshold,
        case threshold_names.threshold
            when 'warning' then kinds.levels.warning
            -- "over" is a DuckDB keyword naming a struct field: it stays quoted
            else kinds.levels."over"  -- noqa: RF06
        end as level,
        kinds.levels.hours as level_hours
    from budget_alert_plans as plans
    cross join lateral (
        select 'low_gpu_utilization' as kind, plans.low_gpu_utilization_thresholds as levels
        union all
        select 'data_loading_share' as kind, plans.data_loading_share_thresholds as levels
    ) as kinds
    cross join (values ('warning'), ('over')) as threshold_names (threshold)
    where kinds.levels is not null
),

beyond as (
    select
        levels.*,
        hours.hour,
        if(levels.kind = 'low_gpu_utilization', hours.gpu_utilization, hours.data_wait_share) as observed
    from levels
    inner join hours on levels.training_run = hours.training_run
    where
        case levels.kind
            when 'low_gpu_utilization' then hours.gpu_utilization < levels.level
            else hours.data_wait_share > levels.level
        end
),

-- consecutive hours beyond a level share their first hour less their position
islands as (
    select
        *,
        hour - to_hours(
            row_number() over (partition by training_run, kind, threshold order by hour)
        ) as island
    from beyond
),

stretches as (
    select
        training_run,
        currency,
        estimated_cost,
        kind,
        threshold,
        level,
        min(hour) as first_hour,
        count(*) as stretch_hours,
        decimal_divide(sum(observed), count(*)) as observed
    from islands
    group by training_run, currency, estimated_cost, kind, threshold, level, level_hours, island
    having count(*) >= level_hours
),

final as (
    select
        stretches.training_run,
        stretches.threshold,
        stretches.level as threshold_fraction,
        stretches.estimated_cost,
        stretches.level as threshold_amount,
        cast(stretches.first_hour as date) as crossed_on,
        coalesce(spend.cumulative_cost, 0) as cumulative_cost,
        stretches.currency,
        runs_as_of.as_of,
        stretches.kind,
        'share' as unit,
        stretches.observed,
        format(
            '{} {}: {} {} {} the {} level {} for {} hours from {} UTC',
            stretches.training_run,
            stretches.kind,
            if(stretches.kind = 'low_gpu_utilization', 'mean GPU utilization', 'data-wait share'),
            cast(round(stretches.observed, 3) as varchar),
            if(stretches.kind = 'low_gpu_utilization', 'below', 'above'),
            stretches.threshold,
            cast(round(stretches.level, 3) as varchar),
            stretches.stretch_hours,
            strftime(stretches.first_hour, '%Y-%m-%d %H:%M')
        ) as detail
    from stretches
    asof left join budget_alert_spend as spend
        on stretches.training_run = spend.training_run
        and cast(stretches.first_hour as date) >= spend.charge_day
    left join run_as_of() as runs_as_of on stretches.training_run = runs_as_of.training_run
    qualify row_number() over (
        partition by stretches.training_run, stretches.kind, stretches.threshold order by stretches.first_hour
    ) = 1
)

select * from final;
