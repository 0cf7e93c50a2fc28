-- The provisional spend of each run in $training_runs and its settled estimates, newest window first.
with requested as (
    select distinct unnest($training_runs) as training_run
),

provisional as (
    select * from provisional_spend
    where training_run in (select training_run from requested)
),

final as (
    select
        training_run, status, billed_through, estimated_through, gpu_hours, rate, estimated_cost, billed_cost,
        error, error_pct, currency
    from provisional
)

select * from final
order by training_run, billed_through desc
