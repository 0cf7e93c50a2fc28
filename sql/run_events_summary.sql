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
order by source_name, event
