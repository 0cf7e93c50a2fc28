-- What a finished pilot run measured, for `runledger estimate --from-run`.

-- name: measures
-- Its progress, the GPUs of its latest start or resume and its compute rate: one row, none for a
-- run without progress.
with progress as (
    select training_run, currency, tokens_trained, wall_clock_hours, tokens_per_gpu_second, gpu_hours, effective_mfu
    from run_progress
    where training_run = $training_run
),

starts as (
    select gpus
    from run_events
    where training_run = $training_run and event in ('start', 'resume') and gpus is not null
    order by event_time desc
    limit 1
),

rates as (
    select actual_rate as compute_rate
    from budget_variance
    where training_run = $training_run and cost_category = 'compute'
),

final as (
    select
        progress.training_run,
        progress.currency,
        progress.tokens_trained,
        progress.wall_clock_hours,
        progress.tokens_per_gpu_second,
        progress.gpu_hours,
        progress.effective_mfu,
        starts.gpus,
        rates.compute_rate
    from progress
    left join starts on true
    left join rates on true
)

select * from final;

-- name: categories
-- Its effective cost per cost category in $currency over every billing period.
with spend as (
    select cost_category, effective_cost
    from run_costs
    where training_run = $training_run and currency = $currency
),

final as (
    select cost_category, sum(effective_cost) as effective_cost
    from spend
    group by cost_category
)

select * from final
order by cost_category
