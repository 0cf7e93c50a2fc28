-- budget_alerts of kind `wall_clock`: its crossings, which the shared `run_crossings` inserts.

-- Kind wall_clock: the UTC day the run's wall-clock, from its first start (or resume) to its
-- latest state event (macro run_state_events; its end once it ended), reached its level.
insert into budget_alert_crossings by name
with run_clocks as (
    select
        training_run,
        min(event_time) filter (where event in ('start', 'resume')) as first_start,
        max(event_time) as clock_end
    from run_state_events()
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

final as (
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
)

select * from final;
