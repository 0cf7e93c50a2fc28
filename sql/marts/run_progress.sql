-- run_progress: each run's training progress from its events, joined to its spend and budget.

-- name: insert
-- Rebuilds run_progress: one row per run with events. The events of a run, in time order, tile
-- its wall-clock (first start → last end, or as_of) into intervals, each from an event to the next
-- one; an interval is productive while the run trains (after a start or resume, until a failure or
-- an end) and downtime otherwise, so productive_hours + downtime_hours = wall_clock_hours exactly.
-- Reads the run's state events (macro run_state_events: metrics events change nothing here).
-- Uses the macros decimal_divide, effective_mfu and cost_per_1e9_tokens (sql/schema/macros.sql).
delete from run_progress;

insert into run_progress by name
with events as (
    select * from run_state_events()
),

allocations as (
    select * from cost_allocations
    where training_run is not null
),

baselines as (
    select * from budget_baselines
),

-- the data's now per run (the macro run_as_of: its sources' newest hour with usage)
runs_as_of as (
    select * from run_as_of()
),

-- state after each event: up (training), failed or ended; NULL before the first start. Events at
-- the same time are taken in the order checkpoint, failure, end, start/resume (a checkpoint
-- written at the end is training's, a resume at the moment of a failure follows it).
event_states as (
    select
        row_number() over run_order as seq,
        training_run,
        event_time,
        event,
        step,
        tokens,
        last_value(
            case event when 'start' then 'up' when 'resume' then 'up' when 'failure' then 'failed' when 'end'
                then 'ended' end ignore nulls
        ) over run_order as state,
        last_value(case when event in ('start', 'resume') then gpus end ignore nulls) over run_order as gpus,
        lead(event_time) over run_order as next_time,
        lead(step) over run_order as next_step
    from events
    window run_order as (
        partition by training_run
        order by
            event_time,
            case event when 'checkpoint' then 0 when 'failure' then 1 when 'end' then 2 else 3 end,
            step
        rows between unbounded preceding and current row
    )
),

run_spans as (
    select
        event_states.training_run,
        -- the first start (or a resume, when the log begins with one): where the tiling begins
        min(event_states.event_time) filter (where event_states.state is not null) as first_start,
        arg_max(event_states.state, event_states.seq) as final_state,
        max(event_states.event_time) filter (where event_states.event = 'end') as last_end,
        max(event_states.event_time) as last_event,
        arg_max(event_states.step, event_states.seq) as last_step,
        arg_max(event_states.tokens, event_states.seq) filter (where event_states.tokens is not null)
            as last_tokens
    from event_states
    group by event_states.training_run
),

run_windows as (
    select
        run_spans.*,
        greatest(runs_as_of.as_of, run_spans.last_event) as as_of,
        case
            when run_spans.final_state = 'ended' then run_spans.last_end
            else greatest(runs_as_of.as_of, run_spans.last_event)
        end as wall_end
    from run_spans
    left join runs_as_of on run_spans.training_run = runs_as_of.training_run
),

intervals as (
    select
        event_states.training_run,
        event_states.state,
        event_states.gpus,
        -- the next event's step only when it falls inside the wall-clock (a step/time pair)
        case when event_states.next_time <= run_windows.wall_end then event_states.next_step - event_states.step end
            as steps,
        greatest(0, date_diff(
            'second',
            event_states.event_time,
            least(coalesce(event_states.next_time, run_windows.wall_end), run_windows.wall_end)
        )) as seconds
    from event_states
    inner join run_windows on event_states.training_run = run_windows.training_run
    where event_states.state is not null and event_states.event_time < run_windows.wall_end
),

run_times as (
    select
        training_run,
        coalesce(sum(seconds) filter (where state = 'up'), 0) as productive_seconds,
        coalesce(sum(seconds * gpus) filter (where state = 'failed'), 0) as downtime_gpu_seconds,
        sum(seconds) filter (where state = 'up' and steps is not null) as stepping_seconds,
        sum(steps) filter (where state = 'up') as steps_advanced,
        sum(seconds * gpus) filter (where state = 'up' and steps is not null) as stepping_gpu_seconds
    from intervals
    group by training_run
),

run_spend as (
    select
        training_run,
        if(count(distinct BillingCurrency) = 1, any_value(BillingCurrency), null) as currency,
        sum(effective_cost) as effective_cost,
        coalesce(sum(gpu_hours) filter (where x_CostCategory = 'compute'), 0) as gpu_hours
    from allocations
    group by training_run
),

run_budgets as (
    select
        training_run,
        sum(estimated_cost) as estimated_cost,
        any_value(training_tokens) filter (where cost_category = 'compute') as training_tokens,
        any_value(gpu_hours_at_peak) filter (where cost_category = 'compute') as gpu_hours_at_peak,
        any_value(tokens_per_step) filter (where cost_category = 'compute') as tokens_per_step
    from baselines
    group by training_run
),

progress as (
    select
        run_windows.training_run,
        run_spend.currency,
        run_windows.final_state,
        run_windows.last_step,
        -- the events' own count of tokens where they give one, else steps x tokens per step
        coalesce(
            cast(run_windows.last_tokens as hugeint),
            cast(run_windows.last_step as hugeint) * run_budgets.tokens_per_step
        ) as tokens_trained,
        date_diff('second', run_windows.first_start, run_windows.wall_end) as wall_clock_seconds,
        coalesce(run_times.productive_seconds, 0) as productive_seconds,
        coalesce(run_times.downtime_gpu_seconds, 0) as downtime_gpu_seconds,
        run_times.stepping_seconds,
        run_times.steps_advanced,
        run_times.stepping_gpu_seconds,
        run_budgets.tokens_per_step,
        coalesce(run_spend.gpu_hours, cast(0 as decimal(38, 10))) as gpu_hours,
        coalesce(run_spend.effective_cost, cast(0 as decimal(38, 10))) as effective_cost,
        run_budgets.estimated_cost,
        run_budgets.training_tokens,
        run_budgets.gpu_hours_at_peak,
        run_windows.as_of
    from run_windows
    left join run_times on run_windows.training_run = run_times.training_run
    left join run_spend on run_windows.training_run = run_spend.training_run
    left join run_budgets on run_windows.training_run = run_budgets.training_run
    where run_windows.first_start is not null
),

final as (
    select
        training_run,
        currency,
        case final_state when 'up' then 'training' when 'failed' then 'down' else final_state end as state,
        last_step,
        tokens_trained,
        decimal_divide(wall_clock_seconds, 3600) as wall_clock_hours,
        decimal_divide(productive_seconds, 3600) as productive_hours,
        decimal_divide(wall_clock_seconds, 3600) - decimal_divide(productive_seconds, 3600) as downtime_hours,
        decimal_divide(downtime_gpu_seconds, 3600) as downtime_gpu_hours,
        decimal_divide(stepping_seconds, steps_advanced) as step_time_seconds,
        decimal_divide(cast(tokens_per_step as hugeint) * steps_advanced, stepping_gpu_seconds)
            as tokens_per_gpu_second,
        gpu_hours,
        effective_mfu(gpu_hours_at_peak, training_tokens, tokens_trained, gpu_hours) as effective_mfu,
        effective_cost,
        if(currency is null, null, cost_per_1e9_tokens(effective_cost, tokens_trained)) as cost_per_1e9_tokens,
        cost_per_1e9_tokens(estimated_cost, training_tokens) as estimated_cost_per_1e9_tokens,
        as_of
    from progress
)

select * from final
order by training_run;

-- name: count
-- Rows of run_progress.
select count(*) from run_progress;

-- name: summary
-- Progress per run for the run_progress asset's metadata.
with progress as (
    select * from run_progress
),

final as (
    select training_run, tokens_trained, wall_clock_hours, downtime_hours, cost_per_1e9_tokens,
        estimated_cost_per_1e9_tokens
    from progress
)

select * from final
order by training_run;
