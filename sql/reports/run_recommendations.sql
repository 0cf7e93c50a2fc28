-- The recommendations of each run in $training_runs, and those left out for missing inputs.

-- name: rows
-- Largest saving first.
with requested as (
    select distinct unnest($training_runs) as training_run
),

recommended as (
    select * from recommendations
    where training_run in (select training_run from requested)
),

final as (
    select training_run, cluster, kind, estimated_saving, currency, evidence, action
    from recommended
)

select * from final
order by training_run, estimated_saving desc, kind;

-- name: left_out
-- In the order of the kinds' names.
with requested as (
    select distinct unnest($training_runs) as training_run
),

left_out as (
    select * from recommendations_left_out
    where training_run in (select training_run from requested)
),

final as (
    select training_run, kind, reason
    from left_out
)

select * from final
order by training_run, kind;
