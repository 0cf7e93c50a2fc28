-- The run events table, replaced whole from every `run_events` source.

-- name: delete
-- Empties run_events before the events of every configured source are inserted again.
delete from run_events;

-- name: insert
-- The events of one source, from the Arrow table registered as staged_run_events.
insert into run_events by name
with staged as (
    select * from staged_run_events
),

final as (
    select
        $source_name as source_name,
        training_run,
        event_time,
        event,
        step,
        gpus,
        config_hash,
        origin,
        tokens,
        step_seconds,
        data_wait_seconds,
        duration_seconds
    from staged
)

select * from final;

-- name: summary
-- Events per source and kind, for the run_events asset's metadata.
with events as (
    select * from run_events
),

final as (
    select source_name, event, count(*) as events, count(distinct training_run) as training_runs
    from events
    group by source_name, event
)

select * from final
order by source_name, event;
