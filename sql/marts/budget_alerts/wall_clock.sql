-- budget_alerts of kind `wall_clock`, inserted after the shared parts of sql/marts/budget_alerts.sql.

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
