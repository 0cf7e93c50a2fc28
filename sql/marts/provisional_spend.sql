-- provisional_spend: each run's spend since its newest billed hour, estimated from its events, and
-- the ledger of the estimates the bill has since covered. The three statements run in order in one
-- transaction (pipelines.waste.provisional): settle, forget, insert.

-- name: settle
-- Adds a billed row for every provisional estimate whose window the bill now covers (the run's
-- newest billed hour is at or after the window's end): the effective cost of the run's usage lines
-- of a day or shorter charged in the window, and the error. Uses the macro decimal_divide.
insert into provisional_spend by name
with estimates as (
    select * from provisional_spend
    where status = 'provisional'
),

usage_lines as (
    select * from cost_allocations
    where training_run is not null and ChargePeriodEnd <= ChargePeriodStart + interval 1 day
),

run_bills as (
    select training_run, max(ChargePeriodEnd) as billed_through
    from usage_lines
    group by training_run
),

window_bills as (
    select
        estimates.training_run,
        estimates.currency,
        estimates.billed_through,
        estimates.estimated_through,
        estimates.gpu_hours,
        estimates.rate,
        estimates.estimated_cost,
        coalesce(sum(usage_lines.effective_cost), 0) as billed_cost
    from estimates
    inner join run_bills
        on estimates.training_run = run_bills.training_run and run_bills.billed_through >= estimates.estimated_through
    left join usage_lines
        on estimates.training_run = usage_lines.training_run
        and usage_lines.ChargePeriodStart >= estimates.billed_through
        and usage_lines.ChargePeriodStart < estimates.estimated_through
    group by all
),

final as (
    select
        *,
        'billed' as status,
        estimated_cost - billed_cost as error,
        decimal_divide((estimated_cost - billed_cost) * 100, billed_cost) as error_pct
    from window_bills
)

select * from final;

-- name: forget
-- Removes the provisional rows: each is settled by now, or estimated again from tonight's bill.
delete from provisional_spend
where status = 'provisional';

-- name: insert
-- One provisional row per run whose events go on after its newest billed hour: the GPU-hours the
-- events give the window (productive seconds x the gpus of the latest start or resume; events at
-- the same time in the order checkpoint, failure, end, start/resume) at the run's observed effective
-- cost per GPU-hour of its usage lines of a day or shorter. Uses the macros run_state_events (no
-- metrics event) and decimal_divide.
insert into provisional_spend by name
with events as (
    select * from run_state_events()
),

usage_lines as (
    select * from cost_allocations
    where training_run is not null and ChargePeriodEnd <= ChargePeriodStart + interval 1 day
),

run_bills as (
    select
        training_run,
        case when count(distinct BillingCurrency) = 1 then any_value(BillingCurrency) end as currency,
        max(ChargePeriodEnd) as billed_through,
        sum(effective_cost) as billed_cost,
        sum(gpu_hours) as billed_gpu_hours
    from usage_lines
    group by training_run
),

event_states as (
    select
        training_run,
        event_time,
        last_value(
            case event when 'start' then 'up' when 'resume' then 'up' when 'failure' then 'failed' when 'end'
                then 'ended' end ignore nulls
        ) over run_order as state,
        last_value(case when event in ('start', 'resume') then gpus end ignore nulls) over run_order as gpus,
        lead(event_time) over run_order as next_time,
        max(event_time) over (partition by training_run) as estimated_through
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

window_seconds as (
    select
        run_bills.training_run,
        run_bills.currency,
        run_bills.billed_through,
        event_states.estimated_through,
        run_bills.billed_cost,
        run_bills.billed_gpu_hours,
        sum(
            date_diff(
                'second',
                greatest(event_states.event_time, run_bills.billed_through),
                least(event_states.next_time, event_states.estimated_through)
            ) * event_states.gpus
        ) filter (
            where event_states.state = 'up'
            and least(event_states.next_time, event_states.estimated_through)
            > greatest(event_states.event_time, run_bills.billed_through)
        ) as gpu_seconds
    from run_bills
    inner join event_states on run_bills.training_run = event_states.training_run
    where event_states.estimated_through > run_bills.billed_through
    group by all
),

final as (
    select
        training_run,
        currency,
        billed_through,
        estimated_through,
        decimal_divide(gpu_seconds, 3600) as gpu_hours,
        decimal_divide(billed_cost, billed_gpu_hours) as rate,
        decimal_divide(billed_cost * gpu_seconds, billed_gpu_hours * 3600) as estimated_cost,
        'provisional' as status
    from window_seconds
    where gpu_seconds > 0 and billed_gpu_hours > 0
)

select * from final;

-- name: summary
-- Every row, newest window first, for the asset's metadata, `runledger run` and the reports.
select
    training_run,
    status,
    billed_through,
    estimated_through,
    gpu_hours,
    estimated_cost,
    billed_cost,
    error,
    error_pct,
    currency
from provisional_spend
order by training_run, billed_through desc;

-- name: provisional
-- The provisional rows `runledger run` lists after its summary, money rounded to cents.
select
    training_run,
    billed_through,
    estimated_through,
    round(gpu_hours, 1) as gpu_hours,
    round(estimated_cost, 2) as estimated_cost,
    currency
from provisional_spend
where status = 'provisional'
order by training_run;

-- name: count
-- The provisional rows: the runs with spend the bill does not show yet.
select count(*) from provisional_spend
where status = 'provisional';
