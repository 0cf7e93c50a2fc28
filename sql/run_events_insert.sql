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
        origin
    from staged
)

select * from final
