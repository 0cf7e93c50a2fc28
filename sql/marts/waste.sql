-- waste: what attributed spend bought no training with.

-- name: insert
-- Rebuilds waste (README "Waste"): one row per item of eight kinds, all amounts exact in units of
-- 1e-10 (decimal_divide). Each allocation part counts for at most one of idle_after_run,
-- checkpoint_retention, cross_region_transfer and monitoring_growth; recompute_after_failure is
-- capped at the run's compute spend before its end; a repeated run's whole cost is
-- duplicate_experiment and nothing else. Last, a run's items are capped in kind order so they
-- never sum to more than its attributed effective cost (credits can make it smaller); a capped
-- item keeps the same share of its GPU-hours.
-- The events are the runs' state events (macro run_state_events: no metrics event).
-- $checkpoint_resources and $inter_region_transfer: lower-case globs (config `waste:`);
-- $low_utilization_warning: the low_gpu_utilization warning level of a run without a budget.
delete from waste;

insert into waste by name
with allocations as (
    select * from cost_allocations
    where training_run is not null
),

transfer_line_items as (
    select x_LineItemKey, ChargeDescription
    from focus_line_items
    where x_CostCategory = 'network'
        and coalesce(list_bool_or(list_transform(
            cast($inter_region_transfer as varchar[]), pattern -> lower(ChargeDescription) glob pattern
        )), false)
),

costs as (
    select * from run_costs
),

baselines as (
    select * from budget_baselines
),

events as (
    select * from run_state_events()
),

utilization as (
    select * from run_utilization
),

runs as (
    select
        training_run,
        any_value(owner) as owner,
        any_value(experiment) as experiment,
        any_value(dataset_version) as dataset_version,
        min(first_charge) as first_charge,
        sum(effective_cost) as attributed_cost,
        coalesce(sum(effective_cost) filter (where cost_category = 'compute'), 0) as compute_cost,
        coalesce(sum(gpu_hours) filter (where cost_category = 'compute'), 0) as compute_gpu_hours
    from costs
    group by training_run
),

run_ends as (
    select * from run_end_times()
),

parts as (
    select
        allocations.training_run,
        allocations.x_LineItemKey,
        allocations.x_CostCategory as cost_category,
        allocations.ResourceId as resource_id,
        allocations.ChargePeriodStart as charge_start,
        coalesce(allocations.ChargePeriodEnd, allocations.ChargePeriodStart) as charge_end,
        allocations.effective_cost,
        allocations.gpu_hours,
        run_ends.end_time,
        -- a list lambda per row, not a correlated EXISTS: DuckDB would decorrelate that into a
        -- join over every allocation part's ResourceId (half of this statement's time at 20M);
        -- the run's registered storage kept after its window is its retained checkpoints too
        allocations.x_CostCategory = 'storage' and (
            allocations.allocation_rule = 'registry after window'
            or coalesce(list_bool_or(list_transform(
                cast($checkpoint_resources as varchar[]), pattern -> lower(allocations.ResourceId) glob pattern
            )), false)
        ) as is_checkpoint,
        allocations.allocation_method <> 'shared' and allocations.ResourceId is not null as is_run_resource,
        date_diff(
            'second',
            allocations.ChargePeriodStart,
            coalesce(allocations.ChargePeriodEnd, allocations.ChargePeriodStart)
        ) as charge_seconds
    from allocations
    left join run_ends on allocations.training_run = run_ends.training_run
),

idle_split as (
    select
        *,
        case
            when not is_run_resource or is_checkpoint or end_time is null or charge_end <= end_time then 'none'
            when charge_start >= end_time then 'all'
            else 'part'
        end as idle_share,
        date_diff('second', end_time, charge_end) as seconds_after_end
    from parts
),

part_amounts as (
    select
        *,
        case idle_share
            when 'none' then cast(0 as decimal(38, 10))
            when 'all' then effective_cost
            else decimal_divide(effective_cost * seconds_after_end, charge_seconds)
        end as idle_cost,
        case idle_share
            when 'none' then cast(0 as decimal(38, 10))
            when 'all' then gpu_hours
            else decimal_divide(gpu_hours * seconds_after_end, charge_seconds)
        end as idle_gpu_hours
    from idle_split
),

active_parts as (
    select *, effective_cost - idle_cost as active_cost
    from part_amounts
),

idle_items as (
    select
        active_parts.training_run,
        'idle_after_run' as kind,
        active_parts.cost_category,
        sum(active_parts.idle_cost) as effective_cost,
        sum(active_parts.idle_gpu_hours) as gpu_hours,
        'resource ' || active_parts.resource_id || ': charged after the run''s ' || any_value(run_ends.end_source)
            || ' at ' || strftime(any_value(run_ends.end_time), '%Y-%m-%d %H:%M') || ' UTC, until '
            || strftime(max(active_parts.charge_end), '%Y-%m-%d %H:%M') || ' UTC' as detail
    from active_parts
    inner join run_ends on active_parts.training_run = run_ends.training_run
    where active_parts.idle_cost <> 0
    group by active_parts.training_run, active_parts.cost_category, active_parts.resource_id
),

compute_before_end as (
    select training_run, sum(active_cost) as active_compute_cost
    from active_parts
    where cost_category = 'compute'
    group by training_run
),

failures as (
    select
        failure.training_run,
        failure.event_time as failed_at,
        failure.step as failed_step,
        (
            select max(checkpoint.event_time) from events as checkpoint
            where checkpoint.training_run = failure.training_run and checkpoint.event = 'checkpoint'
                and checkpoint.event_time <= failure.event_time
        ) as last_checkpoint,
        (
            select max(launch.event_time) from events as launch
            where launch.training_run = failure.training_run and launch.event in ('start', 'resume')
                and launch.event_time <= failure.event_time
        ) as last_launch,
        (
            select arg_max(launch.gpus, launch.event_time) from events as launch
            where launch.training_run = failure.training_run and launch.event in ('start', 'resume')
                and launch.gpus is not null and launch.event_time <= failure.event_time
        ) as gpus
    from events as failure
    where failure.event = 'failure'
),

lost_work as (
    select
        failures.*,
        greatest(last_checkpoint, last_launch) as lost_from,
        decimal_divide(date_diff('second', greatest(last_checkpoint, last_launch), failed_at) * gpus, 3600)
            as lost_gpu_hours
    from failures
    where greatest(last_checkpoint, last_launch) is not null and gpus is not null
),

priced_recompute as (
    select
        lost_work.*,
        decimal_divide(lost_work.lost_gpu_hours * runs.compute_cost, runs.compute_gpu_hours) as recompute_cost,
        coalesce(compute_before_end.active_compute_cost, 0) as active_compute_cost
    from lost_work
    inner join runs on lost_work.training_run = runs.training_run
    left join compute_before_end on lost_work.training_run = compute_before_end.training_run
    where runs.compute_gpu_hours > 0
),

recompute_items as (
    select
        training_run,
        'recompute_after_failure' as kind,
        'compute' as cost_category,
        least(
            recompute_cost,
            greatest(
                active_compute_cost - coalesce(sum(recompute_cost) over (
                    partition by training_run order by failed_at rows between unbounded preceding and 1 preceding
                ), 0),
                0
            )
        ) as effective_cost,
        lost_gpu_hours as gpu_hours,
        'failure at ' || strftime(failed_at, '%Y-%m-%d %H:%M') || ' UTC (step ' || failed_step || '): '
            || (case when lost_from = last_checkpoint then 'last checkpoint at ' else 'last start/resume at ' end)
            || strftime(lost_from, '%Y-%m-%d %H:%M') || ' UTC, ' || gpus || ' GPUs' as detail
    from priced_recompute
),

checkpoint_counts as (
    select
        active_parts.training_run,
        active_parts.cost_category,
        active_parts.resource_id,
        active_parts.effective_cost,
        active_parts.charge_end,
        retained.checkpoints_retained,
        (
            select count(*) from events
            where events.training_run = active_parts.training_run and events.event = 'checkpoint'
                and events.event_time <= active_parts.charge_end
        ) as checkpoints_written
    from active_parts
    inner join (
        select training_run, checkpoints_retained from baselines where checkpoints_retained is not null
    ) as retained on active_parts.training_run = retained.training_run
    where active_parts.is_checkpoint
),

checkpoint_items as (
    select
        training_run,
        'checkpoint_retention' as kind,
        cost_category,
        sum(decimal_divide(
            effective_cost * (checkpoints_written - checkpoints_retained), checkpoints_written
        )) as effective_cost,
        cast(0 as decimal(38, 10)) as gpu_hours,
        'resource ' || resource_id || ': up to ' || max(checkpoints_written) || ' checkpoints stored, '
            || any_value(checkpoints_retained) || ' retained in the budget' as detail
    from checkpoint_counts
    where checkpoints_written > checkpoints_retained
    group by training_run, cost_category, resource_id
),

transfer_items as (
    select
        active_parts.training_run,
        'cross_region_transfer' as kind,
        active_parts.cost_category,
        sum(active_parts.active_cost) as effective_cost,
        cast(0 as decimal(38, 10)) as gpu_hours,
        'resource ' || coalesce(active_parts.resource_id, '(none)') || ': '
            || transfer_line_items.ChargeDescription as detail
    from active_parts
    inner join transfer_line_items on active_parts.x_LineItemKey = transfer_line_items.x_LineItemKey
    where active_parts.cost_category = 'network'
    group by
        active_parts.training_run,
        active_parts.cost_category,
        active_parts.resource_id,
        transfer_line_items.ChargeDescription
),

monitoring_items as (
    select
        active_parts.training_run,
        'monitoring_growth' as kind,
        'monitoring' as cost_category,
        sum(active_parts.active_cost) - any_value(monitoring_estimates.estimated_cost) as effective_cost,
        cast(0 as decimal(38, 10)) as gpu_hours,
        'monitoring spend ' || cast(round(sum(active_parts.active_cost), 2) as varchar) || ' against an estimate of '
            || cast(round(any_value(monitoring_estimates.estimated_cost), 2) as varchar) as detail
    from active_parts
    inner join (
        select training_run, estimated_cost from baselines where cost_category = 'monitoring'
    ) as monitoring_estimates on active_parts.training_run = monitoring_estimates.training_run
    where active_parts.cost_category = 'monitoring'
    group by active_parts.training_run
),

run_keys as (
    select
        runs.training_run,
        runs.experiment,
        runs.dataset_version,
        config_hashes.config_hash,
        coalesce(config_hashes.first_start, runs.first_charge) as started_at
    from runs
    left join (
        select
            training_run,
            arg_min(config_hash, event_time) filter (where config_hash is not null) as config_hash,
            min(event_time) filter (where event = 'start') as first_start
        from events
        group by training_run
    ) as config_hashes on runs.training_run = config_hashes.training_run
    where runs.experiment is not null and runs.dataset_version is not null and config_hashes.config_hash is not null
),

repeated_runs as (
    select
        training_run,
        experiment,
        dataset_version,
        config_hash,
        first_value(training_run) over (
            partition by experiment, dataset_version, config_hash order by started_at, training_run
        ) as original_run
    from run_keys
    qualify row_number() over (
        partition by experiment, dataset_version, config_hash order by started_at, training_run
    ) > 1
),

duplicate_items as (
    select
        costs.training_run,
        'duplicate_experiment' as kind,
        costs.cost_category,
        sum(costs.effective_cost) as effective_cost,
        sum(costs.gpu_hours) as gpu_hours,
        'repeats ' || any_value(repeated_runs.original_run) || ' (experiment ' || any_value(repeated_runs.experiment)
            || ', dataset ' || any_value(repeated_runs.dataset_version) || ', config_hash '
            || any_value(repeated_runs.config_hash) || ')' as detail
    from costs
    inner join repeated_runs on costs.training_run = repeated_runs.training_run
    group by costs.training_run, costs.cost_category
),

-- telemetry: the data-wait GPU-hours (as the input_bound cause counts them), and over the hours the
-- run was training at their start, the GPU-hours idle in hours below the low-utilization warning
-- level less their data-wait share (so that no GPU-hour counts in both)
low_levels as (
    select training_run, any_value(low_gpu_utilization_thresholds.warning) as warning
    from baselines
    group by training_run
),

-- a run trains from a start or resume until its next failure or end: hours outside (idle after
-- the end, restart downtime) are other waste kinds' and usage causes' GPU-hours
run_states as (
    select training_run, event_time, event in ('start', 'resume') as training
    from events
    where event in ('start', 'resume', 'failure', 'end')
),

training_hours as (
    select utilization.*
    from utilization
    asof inner join run_states
        on utilization.training_run = run_states.training_run
        and utilization.hour >= run_states.event_time
    where run_states.training
),

data_waits as (
    select
        training_run,
        sum(data_wait_gpu_hours) as wait_gpu_hours,
        count(*) filter (where data_wait_gpu_hours > 0) as wait_hours
    from utilization
    group by training_run
),

low_hours as (
    select
        training_hours.training_run,
        sum(
            round(
                training_hours.gpus * (1 - training_hours.gpu_utilization)
                * (1 - coalesce(training_hours.data_wait_share, 0)),
                10
            )
        ) as low_gpu_hours,
        count(*) as low_hours,
        any_value(coalesce(low_levels.warning, $low_utilization_warning)) as low_level
    from training_hours
    left join low_levels on training_hours.training_run = low_levels.training_run
    where training_hours.gpu_utilization < coalesce(low_levels.warning, $low_utilization_warning)
    group by training_hours.training_run
),

telemetry_items as (
    select
        data_waits.training_run,
        'data_loading_stall' as kind,
        'compute' as cost_category,
        decimal_divide(data_waits.wait_gpu_hours * runs.compute_cost, runs.compute_gpu_hours) as effective_cost,
        data_waits.wait_gpu_hours as gpu_hours,
        format('{:,.2f}', data_waits.wait_gpu_hours) || ' GPU-hours waiting for data over ' || data_waits.wait_hours
            || ' hour' || if(data_waits.wait_hours = 1, '', 's') || ' with step timings' as detail
    from data_waits
    inner join runs on data_waits.training_run = runs.training_run
    where runs.compute_gpu_hours > 0 and data_waits.wait_gpu_hours > 0
    union all
    select
        low_hours.training_run,
        'low_utilization',
        'compute',
        decimal_divide(low_hours.low_gpu_hours * runs.compute_cost, runs.compute_gpu_hours),
        low_hours.low_gpu_hours,
        format('{:,.2f}', low_hours.low_gpu_hours) || ' GPU-hours idle in ' || low_hours.low_hours || ' hour'
            || if(low_hours.low_hours = 1, '', 's') || ' below ' || format('{:.0f}', 100 * low_hours.low_level)
            || ' % GPU utilization'
    from low_hours
    inner join runs on low_hours.training_run = runs.training_run
    where runs.compute_gpu_hours > 0 and low_hours.low_gpu_hours > 0
),

items as (
    select *, 1 as priority from recompute_items
    union all by name
    select *, 2 as priority from idle_items
    union all by name
    select *, 3 as priority from checkpoint_items
    union all by name
    select *, 4 as priority from transfer_items
    union all by name
    select *, 5 as priority from monitoring_items
    union all by name
    select *, 6 as priority from duplicate_items
    union all by name
    select *, if(kind = 'data_loading_stall', 7, 8) as priority from telemetry_items
),

kept_items as (
    select * from items
    where effective_cost > 0
        and (kind = 'duplicate_experiment' or training_run not in (select training_run from repeated_runs))
),

capped as (
    select
        kept_items.*,
        runs.owner,
        greatest(
            runs.attributed_cost - coalesce(sum(kept_items.effective_cost) over (
                partition by kept_items.training_run
                order by
                    kept_items.priority, kept_items.effective_cost desc, kept_items.cost_category, kept_items.detail
                rows between unbounded preceding and 1 preceding
            ), 0),
            0
        ) as room
    from kept_items
    inner join runs on kept_items.training_run = runs.training_run
),

final as (
    select
        training_run,
        owner,
        kind,
        cost_category,
        least(effective_cost, room) as effective_cost,
        case when room < effective_cost then decimal_divide(gpu_hours * room, effective_cost) else gpu_hours end
            as gpu_hours,
        case kind
            when 'idle_after_run' then 'spend on the run''s own resources (tag, snapshot or registry attribution, '
                || 'checkpoint storage excepted) charged after its last end event, or after its registry window '
                || 'when it has no events; a line straddling the end counts by its share of time after it'
            when 'recompute_after_failure' then 'GPU-hours from the later of the last checkpoint and the last '
                || 'start/resume before the failure to the failure, x the GPUs of the latest start/resume, '
                || 'priced at the run''s compute effective cost / compute GPU-hours'
            when 'checkpoint_retention' then 'each checkpoint-storage line (its ResourceId matches '
                || 'waste.checkpoint_resources, or registered storage kept after the run''s registry window) x '
                || '(checkpoints written by its charge end - the budget''s checkpoints_retained) / checkpoints written'
            when 'cross_region_transfer' then 'network lines described as inter-region data transfer '
                || '(waste.inter_region_transfer), charged before the run''s end'
            when 'monitoring_growth' then 'monitoring spend before the run''s end above the budget''s '
                || 'monitoring estimate'
            when 'duplicate_experiment' then 'the whole attributed cost of a run repeating an earlier run''s '
                || 'experiment, dataset version and config_hash'
            when 'data_loading_stall' then 'data-wait GPU-hours of run_utilization (GPUs x hours with step '
                || 'timings x their data-wait share), priced at the run''s compute effective cost / compute '
                || 'GPU-hours; hours later redone after a failure count here and in recompute_after_failure'
            when 'low_utilization' then 'over the hours the run was training whose GPU utilization is below the '
                || 'low_gpu_utilization warning level: GPUs x (1 - utilization) x (1 - data-wait share), so no '
                || 'GPU-hour counts in data_loading_stall too; priced at the run''s compute effective cost / compute '
                || 'GPU-hours'
        end as method,
        detail
    from capped
    where least(effective_cost, room) > 0
)

select * from final
order by training_run, kind, effective_cost desc;

-- name: count
-- Rows of waste.
select count(*) from waste;

-- name: summary
-- Waste per run (largest share first): attributed effective cost, waste and its share.
with waste_items as (
    select * from waste
),

costs as (
    select training_run, any_value(owner) as owner, sum(effective_cost) as attributed_cost
    from run_costs
    group by training_run
),

per_run as (
    select training_run, sum(effective_cost) as waste_cost
    from waste_items
    group by training_run
),

final as (
    select
        costs.training_run,
        costs.owner,
        costs.attributed_cost,
        coalesce(per_run.waste_cost, 0) as waste_cost,
        decimal_divide(coalesce(per_run.waste_cost, 0), costs.attributed_cost) as waste_share
    from costs
    left join per_run on costs.training_run = per_run.training_run
)

select * from final
order by waste_share desc nulls last, training_run;

-- name: run_summary
-- Waste per run for the end of `runledger run`, largest share first; money rounded to cents for
-- display (the waste table keeps 10 decimals).
with per_run as (
    select * from waste_by_run
),

final as (
    select
        training_run,
        any_value(owner) as owner,
        round(sum(effective_cost), 2) as waste,
        round(decimal_divide(sum(effective_cost), any_value(attributed_cost)) * 100, 1) as waste_pct,
        round(sum(effective_cost) filter (where kind = 'idle_after_run'), 2) as idle_after_run,
        round(sum(effective_cost) filter (where kind = 'recompute_after_failure'), 2) as recompute,
        round(sum(effective_cost) filter (where kind = 'checkpoint_retention'), 2) as checkpoints,
        round(sum(effective_cost) filter (where kind = 'cross_region_transfer'), 2) as cross_region,
        round(sum(effective_cost) filter (where kind = 'duplicate_experiment'), 2) as duplicate,
        round(sum(effective_cost) filter (where kind = 'monitoring_growth'), 2) as monitoring,
        round(sum(effective_cost) filter (where kind = 'data_loading_stall'), 2) as data_loading,
        round(sum(effective_cost) filter (where kind = 'low_utilization'), 2) as low_utilization
    from per_run
    group by training_run
)

select * from final
order by waste_pct desc, training_run;
