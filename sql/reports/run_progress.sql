-- The training progress of each run in $training_runs (a run without events has no row), with the
-- planned tokens and steps of its budget and the effective MFU budget_variance reports.
with requested as (
    select distinct unnest($training_runs) as training_run
),

progress as (
    select * from run_progress
    where training_run in (select training_run from requested)
),

plans as (
    select training_run, training_tokens, tokens_per_step
    from budget_baselines
    where cost_category = 'compute' and training_run in (select training_run from requested)
),

variances as (
    select training_run, actual_effective_mfu
    from budget_variance
    where cost_category = 'compute' and training_run in (select training_run from requested)
),

final as (
    select
        progress.training_run,
        progress.tokens_trained,
        cast(plans.training_tokens as hugeint) as planned_tokens,
        (cast(ceil(plans.training_tokens) as hugeint) + plans.tokens_per_step - 1) // plans.tokens_per_step
            as planned_steps,
        progress.last_step,
        progress.wall_clock_hours,
        progress.productive_hours,
        progress.downtime_hours,
        progress.step_time_seconds,
        progress.tokens_per_gpu_second,
        progress.effective_mfu,
        variances.actual_effective_mfu as planned_tokens_effective_mfu,
        progress.cost_per_1e9_tokens,
        progress.estimated_cost_per_1e9_tokens
    from progress
    left join plans on progress.training_run = plans.training_run
    left join variances on progress.training_run = variances.training_run
)

select * from final
order by training_run
