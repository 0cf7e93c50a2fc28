-- run_utilization: how busy each run's GPUs were and how long its steps waited for data, by hour.

-- name: insert
-- Rebuilds run_utilization from the GPU-hours of gpu_utilization_runs that have a run and the step
-- timings of run_events. An event's step_seconds and data_wait_seconds are totals over its window,
-- from the run's previous event (the latest one before it in time) to it, spread evenly over the
-- window's hours (by the part of the window each hour holds); a window without a previous event or
-- of no step time counts nothing. gpus: the GPUs sampled in the hour, else those of the run's
-- latest start or resume. Uses decimal_divide.
delete from run_utilization;

insert into run_utilization by name
with gpu_hours as (
    select training_run, hour, gpu, samples, utilization_sum
    from gpu_utilization_runs
    where training_run is not null
),

events as (
    select training_run, event_time, event, gpus, step_seconds, data_wait_seconds
    from run_events
),

sampled as (
    select
        training_run,
        hour,
        count(distinct gpu) as gpus,
        sum(samples) as samples,
        decimal_divide(sum(utilization_sum), sum(samples)) as gpu_utilization
    from gpu_hours
    group by training_run, hour
),

windows as (
    select
        training_run,
        max(event_time) over (
            partition by training_run order by event_time
            range between unbounded preceding and interval 1 microsecond preceding
        ) as window_start,
        event_time as window_end,
        step_seconds,
        data_wait_seconds
    from events
),

timed_windows as (
    select
        *,
        date_diff('microsecond', window_start, window_end) as window_micros,
        decimal_divide(data_wait_seconds, step_seconds) as window_share
    from windows
    where step_seconds > 0 and window_start < window_end
),

window_hours as (
    select
        timed_windows.*,
        hours.hour,
        date_diff(
            'microsecond',
            greatest(hours.hour, timed_windows.window_start),
            least(hours.hour + interval 1 hour, timed_windows.window_end)
        ) as overlap_micros
    from timed_windows
    cross join lateral (
        select unnest(
            generate_series(
                date_trunc('hour', timed_windows.window_start),
                timed_windows.window_end - interval 1 microsecond,
                interval 1 hour
            )
        ) as hour
    ) as hours
),

timed as (
    select
        training_run,
        hour,
        sum(data_wait_seconds * decimal_divide(overlap_micros, window_micros)) as wait_seconds,
        sum(step_seconds * decimal_divide(overlap_micros, window_micros)) as step_seconds,
        sum(window_share * decimal_divide(overlap_micros, 3600000000)) as waiting_hours
    from window_hours
    group by training_run, hour
),

run_hours as (
    select
        coalesce(sampled.training_run, timed.training_run) as training_run,
        coalesce(sampled.hour, timed.hour) as hour,
        sampled.gpus as sampled_gpus,
        sampled.gpu_utilization,
        coalesce(sampled.samples, 0) as samples,
        timed.wait_seconds,
        timed.step_seconds,
        timed.waiting_hours
    from sampled
    full outer join timed on sampled.training_run = timed.training_run and sampled.hour = timed.hour
),

run_gpus as (
    select training_run, event_time, gpus
    from events
    where event in ('start', 'resume') and gpus is not null
),

final as (
    select
        run_hours.training_run,
        run_hours.hour,
        coalesce(run_hours.sampled_gpus, run_gpus.gpus) as gpus,
        run_hours.gpu_utilization,
        decimal_divide(run_hours.wait_seconds, run_hours.step_seconds) as data_wait_share,
        run_hours.samples,
        round(coalesce(run_hours.sampled_gpus, run_gpus.gpus) * run_hours.waiting_hours, 10) as data_wait_gpu_hours
    from run_hours
    asof left join run_gpus
        on run_hours.training_run = run_gpus.training_run
        and run_hours.hour + interval 1 hour > run_gpus.event_time
)

select * from final
order by training_run, hour;

-- name: count
-- Rows of run_utilization.
select count(*) from run_utilization;

-- name: summary
-- Per run: hours, mean utilization, the lowest hour, the data-wait share over the timed hours and
-- its GPU-hours, for the asset's metadata.
with hours as (
    select * from run_utilization
),

final as (
    select
        training_run,
        count(*) as hours,
        decimal_divide(sum(gpu_utilization * samples), sum(samples)) as gpu_utilization,
        min(gpu_utilization) as lowest_hour,
        decimal_divide(sum(data_wait_share * gpus), sum(gpus) filter (where data_wait_share is not null))
            as data_wait_share,
        sum(data_wait_gpu_hours) as data_wait_gpu_hours
    from hours
    group by training_run
)

select * from final
order by training_run;

-- name: unattributed
-- The GPU series with hours of no run, by source and reason, for the asset's warning check.
with gpu_hours as (
    select * from gpu_utilization_runs
    where training_run is null
),

final as (
    select
        source_name,
        unattributed_reason as reason,
        count(distinct series) as series,
        count(*) as gpu_hours,
        min(hour) as first_hour,
        max(hour) as last_hour,
        any_value(series) as example
    from gpu_hours
    group by source_name, unattributed_reason
)

select * from final
order by source_name, reason;
