-- recommendations: what to do next, with the saving each action would have brought.

-- name: delete
-- Empties both tables before they are rebuilt.
delete from recommendations;
delete from recommendations_left_out;

-- name: price_ratios
-- The listed price ratios of colder storage classes (temp table storage_price_ratios) from the
-- repository's pipelines/data/storage_price_ratios.csv ($file): meters lower-cased, as the
-- lower-case SkuMeters they match, the ratio as an exact decimal.
create or replace temp table storage_price_ratios as
select
    provider,
    storage_class,
    lower(meter) as meter,
    colder_class,
    cast(price_ratio as decimal(38, 10)) as price_ratio,
    retrieved
from read_csv(
    $file,
    header = true,
    columns = {
        'provider': 'varchar', 'storage_class': 'varchar', 'meter': 'varchar', 'colder_class': 'varchar',
        'location': 'varchar', 'price_unit': 'varchar', 'storage_price': 'varchar', 'colder_price': 'varchar',
        'price_ratio': 'varchar', 'source': 'varchar', 'retrieved': 'varchar'
    }
);

-- name: checkpoints
-- The inputs of each run's checkpoint_interval (temp table recommendation_checkpoints): productive
-- hours (run_progress), failures and checkpoints (run events), the write time w in seconds (the mean
-- duration_seconds of its checkpoint events, else its budget's checkpoint_write_seconds), the GPUs
-- of its latest start/resume, its actual rate (compute effective cost / compute GPU-hours, as the
-- waste prices recompute) and, where an input is missing, why.
create or replace temp table recommendation_checkpoints as
with events as (
    select * from run_state_events()
),

progress as (
    select training_run, productive_hours from run_progress
),

baselines as (
    select training_run, any_value(checkpoint_write_seconds) as budget_write_seconds
    from budget_baselines
    group by training_run
),

costs as (
    select
        training_run,
        any_value(currency) as currency,
        coalesce(sum(effective_cost) filter (where cost_category = 'compute'), 0) as compute_cost,
        coalesce(sum(gpu_hours) filter (where cost_category = 'compute'), 0) as compute_gpu_hours
    from run_costs
    where training_run is not null
    group by training_run
),

recomputed as (
    select training_run, sum(gpu_hours) as recompute_gpu_hours
    from waste
    where kind = 'recompute_after_failure'
    group by training_run
),

event_counts as (
    select
        training_run,
        count(*) filter (where event = 'failure') as failures,
        count(*) filter (where event = 'checkpoint') as checkpoints,
        count(duration_seconds) filter (where event = 'checkpoint') as timed_checkpoints,
        decimal_divide(
            sum(duration_seconds) filter (where event = 'checkpoint'),
            count(duration_seconds) filter (where event = 'checkpoint')
        ) as event_write_seconds,
        arg_max(gpus, event_time) filter (where event in ('start', 'resume') and gpus is not null) as gpus
    from events
    group by training_run
),

joined as (
    select
        costs.training_run,
        costs.currency,
        progress.productive_hours,
        event_counts.failures,
        event_counts.checkpoints,
        event_counts.timed_checkpoints,
        coalesce(event_counts.event_write_seconds, baselines.budget_write_seconds) as write_seconds,
        if(
            event_counts.event_write_seconds is not null,
            'the mean duration_seconds of ' || event_counts.timed_checkpoints || ' checkpoint events',
            'the budget''s checkpoint_write_seconds'
        ) as write_source,
        event_counts.gpus,
        decimal_divide(costs.compute_cost, costs.compute_gpu_hours) as rate,
        coalesce(recomputed.recompute_gpu_hours, 0) as recompute_gpu_hours,
        event_counts.training_run is not null as has_events
    from costs
    left join event_counts on costs.training_run = event_counts.training_run
    left join progress on costs.training_run = progress.training_run
    left join baselines on costs.training_run = baselines.training_run
    left join recomputed on costs.training_run = recomputed.training_run
),

final as (
    select
        *,
        case
            when not has_events then 'no run events: add the run''s start, checkpoint, failure and end events'
            when failures = 0 then 'no failures: without one the mean time between failures is unknown'
            when checkpoints = 0 then 'no checkpoint events: the interval used is unknown'
            when write_seconds is null then 'no checkpoint write time: add duration_seconds to checkpoint events '
                || 'or checkpoint_write_seconds to the budget'
            when coalesce(productive_hours, 0) = 0 then 'no productive hours in run_progress'
            when gpus is null then 'no GPU count: add gpus to the run''s start and resume events'
            when rate is null then 'no compute GPU-hours to price the time at'
        end as missing
    from joined
)

select * from final;

-- name: checkpoint_storage
-- Each run's checkpoint storage charged after its end (temp table
-- recommendation_checkpoint_storage), per resource and storage meter: the run's storage-category
-- spend on its checkpoint resources (waste.checkpoint_resources) whose charge ends after the run's
-- end, a line straddling the end by its share of time after it; the end as the waste analysis
-- takes it (the last end event, else, without events, the registry window's end).
-- $checkpoint_resources: lower-case globs on the ResourceId of storage lines (config `waste:`).
create or replace temp table recommendation_checkpoint_storage as
with run_ends as (
    select * from run_end_times()
),

storage_lines as (
    select x_LineItemKey, SkuMeter
    from focus_line_items
    where x_CostCategory = 'storage'
),

allocations as (
    select * from cost_allocations
    where training_run is not null and x_CostCategory = 'storage'
),

checkpoint_parts as (
    select
        allocations.training_run,
        allocations.BillingCurrency as currency,
        allocations.ProviderName as provider,
        allocations.ResourceId as resource_id,
        lower(storage_lines.SkuMeter) as meter,
        run_ends.end_time,
        coalesce(allocations.ChargePeriodEnd, allocations.ChargePeriodStart) as charge_end,
        case
            when allocations.ChargePeriodStart >= run_ends.end_time then allocations.effective_cost
            else decimal_divide(
                allocations.effective_cost * date_diff('second', run_ends.end_time, allocations.ChargePeriodEnd),
                date_diff('second', allocations.ChargePeriodStart, allocations.ChargePeriodEnd)
            )
        end as cost_after_end
    from allocations
    inner join run_ends on allocations.training_run = run_ends.training_run
    inner join storage_lines on allocations.x_LineItemKey = storage_lines.x_LineItemKey
    where coalesce(allocations.ChargePeriodEnd, allocations.ChargePeriodStart) > run_ends.end_time
        and coalesce(list_bool_or(list_transform(
            cast($checkpoint_resources as varchar[]), pattern -> lower(allocations.ResourceId) glob pattern
        )), false)
),

checkpoint_resources as (
    select
        training_run,
        currency,
        provider,
        resource_id,
        meter,
        any_value(end_time) as end_time,
        max(charge_end) as last_charge,
        sum(cost_after_end) as cost_after_end,
        date_diff('second', any_value(end_time), max(charge_end)) as seconds_after_end
    from checkpoint_parts
    group by training_run, currency, provider, resource_id, meter
),

final as (
    select * from checkpoint_resources
    where seconds_after_end > 0
)

select * from final;

-- name: insert
-- Rebuilds recommendations (docs/semantics.md "Recommendations"). All amounts exact in units of
-- 1e-10 (decimal_divide); hours are DECIMAL(38, 10).
--   checkpoint_interval: w = write seconds / 3600, M = productive hours / failures, the Young/Daly
--     optimum tau = sqrt(2 w M): DuckDB's sqrt in DOUBLE, then one Newton step in DECIMAL
--     ((tau0 + 2wM / tau0) / 2), so tau is within 1e-10 h of the root. The interval used
--     t = productive hours / checkpoints. overhead(t) = productive hours / t x w + failures x t / 2
--     hours; saving = (overhead(t) - overhead(tau)) x GPUs x the actual rate, when positive.
--   stop_idle_after_run, colocate_data, low_gpu_utilization: the run's idle_after_run,
--     cross_region_transfer and low_utilization waste.
--   commit_on_demand_gpus: the run's on-demand effective cost - round(its on-demand GPU-hours x its
--     committed rate, 10) (run_pricing; the committed rate over all its committed pricing types), the
--     form of variance_causes' pricing_mix with the committed rate in place of the estimated one.
--   cold_checkpoints: per checkpoint resource, the run's storage spend on it charged after the run's
--     end (a line straddling the end by its share of time after it) per 30-day month (x 720 hours /
--     the hours from the end to its last charge) x (1 - the lowest price ratio listed for its
--     provider and storage class, temp table storage_price_ratios).
insert into recommendations by name
with checkpoint_inputs as (
    select * from recommendation_checkpoints
    where missing is null
),

waste_items as (
    select * from waste
),

pricing as (
    select * from run_pricing
),

ratios as (
    select * from storage_price_ratios
),

checkpoint_resources as (
    select * from recommendation_checkpoint_storage
),

interval_math as (
    select
        *,
        decimal_divide(write_seconds, 3600) as w,
        decimal_divide(productive_hours, failures) as mtbf,
        decimal_divide(productive_hours, checkpoints) as interval_used
    from checkpoint_inputs
),

interval_root as (
    select
        *,
        round(2 * w * mtbf, 10) as tau_squared,
        cast(sqrt(cast(round(2 * w * mtbf, 10) as double)) as decimal(38, 10)) as tau_estimate
    from interval_math
),

intervals as (
    select
        *,
        decimal_divide(tau_estimate + decimal_divide(tau_squared, tau_estimate), 2) as tau
    from interval_root
),

overheads as (
    select
        *,
        decimal_divide(productive_hours * w, interval_used) + decimal_divide(failures * interval_used, 2)
            as overhead_used,
        decimal_divide(productive_hours * w, tau) + decimal_divide(failures * tau, 2) as overhead_optimal
    from intervals
),

checkpoint_items as (
    select
        training_run,
        'checkpoint_interval' as kind,
        currency,
        round((overhead_used - overhead_optimal) * gpus * rate, 10) as estimated_saving,
        'checkpoint write time w ' || format('{:,.0f}', write_seconds) || ' s (' || write_source || '); '
            || failures || ' failure' || if(failures = 1, '', 's') || ' in ' || format('{:,.2f}', productive_hours)
            || ' productive hours: MTBF ' || format('{:,.2f}', mtbf) || ' h; a checkpoint every '
            || format('{:,.2f}', interval_used) || ' h on average (' || checkpoints
            || ' checkpoints); Young/Daly optimum sqrt(2 w MTBF) = ' || format('{:,.2f}', tau)
            || ' h; checkpoint writes and expected recompute ' || format('{:,.2f}', overhead_used) || ' h against '
            || format('{:,.2f}', overhead_optimal) || ' h, x ' || gpus || ' GPUs at '
            || format('{:,.4f}', rate) || ' per GPU-hour; the failures lost '
            || format('{:,.0f}', recompute_gpu_hours) || ' GPU-hours to recompute' as evidence,
        'Checkpoint every ' || format('{:,.2f}', tau) || ' hours of training instead of every '
            || format('{:,.2f}', interval_used) || ' hours.' as action
    from overheads
),

idle_items as (
    select
        waste_items.training_run,
        'stop_idle_after_run' as kind,
        any_value(costs.currency) as currency,
        sum(waste_items.effective_cost) as estimated_saving,
        count(*) || ' resource item' || if(count(*) = 1, '', 's') || ' of the run charged after its end ('
            || format('{:,.2f}', sum(waste_items.gpu_hours)) || ' GPU-hours): the idle_after_run waste; the largest: '
            || first(waste_items.detail order by waste_items.effective_cost desc, waste_items.detail) as evidence,
        'Stop the run''s instances, volumes and log groups when training ends, e.g. with an end-of-job hook '
            || 'that terminates its nodes.' as action
    from waste_items
    inner join (
        select training_run, any_value(currency) as currency from run_costs group by training_run
    ) as costs on waste_items.training_run = costs.training_run
    where waste_items.kind = 'idle_after_run'
    group by waste_items.training_run
),

waste_kind_items as (
    select
        waste_items.training_run,
        case waste_items.kind when 'cross_region_transfer' then 'colocate_data' else 'low_gpu_utilization' end
            as kind,
        any_value(costs.currency) as currency,
        sum(waste_items.effective_cost) as estimated_saving,
        case waste_items.kind
            when 'cross_region_transfer' then 'the cross_region_transfer waste: '
            else 'the low_utilization waste: '
        end || string_agg(waste_items.detail, '; ' order by waste_items.effective_cost desc, waste_items.detail)
            as evidence,
        case waste_items.kind
            when 'cross_region_transfer' then 'Keep the data the run reads and writes in the region of its GPUs, '
                || 'and copy it elsewhere once after the run if a copy is needed.'
            else 'Find what held the GPUs idle in those hours (a straggler rank, a slow node, too small a batch) '
                || 'from the run''s utilization by hour, and fix it or run on fewer GPUs.'
        end as action
    from waste_items
    inner join (
        select training_run, any_value(currency) as currency from run_costs group by training_run
    ) as costs on waste_items.training_run = costs.training_run
    where waste_items.kind in ('cross_region_transfer', 'low_utilization')
    group by waste_items.training_run, waste_items.kind
),

run_rates as (
    select
        training_run,
        currency,
        sum(gpu_hours) filter (where pricing = 'on_demand') as on_demand_gpu_hours,
        sum(effective_cost) filter (where pricing = 'on_demand') as on_demand_cost,
        sum(resources) filter (where pricing = 'on_demand') as on_demand_resources,
        decimal_divide(
            sum(effective_cost) filter (where pricing in ('savings_plan', 'reservation', 'committed_use', 'committed')),
            sum(gpu_hours) filter (where pricing in ('savings_plan', 'reservation', 'committed_use', 'committed'))
        ) as committed_rate,
        string_agg(
            replace(pricing, '_', ' '), ', ' order by pricing
        ) filter (where pricing in ('savings_plan', 'reservation', 'committed_use', 'committed')) as committed_types
    from pricing
    group by training_run, currency
),

commit_items as (
    select
        training_run,
        'commit_on_demand_gpus' as kind,
        currency,
        on_demand_cost - round(on_demand_gpu_hours * committed_rate, 10) as estimated_saving,
        on_demand_resources || ' resource' || if(on_demand_resources = 1, '', 's') || ' on demand: '
            || format('{:,.0f}', on_demand_gpu_hours) || ' GPU-hours at '
            || format('{:,.4f}', decimal_divide(on_demand_cost, on_demand_gpu_hours))
            || ' per GPU-hour, against the run''s committed ' || format('{:,.4f}', committed_rate) || ' ('
            || committed_types || ')' as evidence,
        'Run these GPU nodes under the run''s ' || committed_types || ' (widen the commitment to cover them) '
            || 'instead of on demand.' as action
    from run_rates
    where on_demand_gpu_hours > 0 and committed_rate is not null
),

colder as (
    select
        checkpoint_resources.*,
        ratios.storage_class,
        ratios.colder_class,
        ratios.price_ratio,
        ratios.retrieved
    from checkpoint_resources
    inner join ratios
        on checkpoint_resources.provider = ratios.provider and checkpoint_resources.meter glob ratios.meter
    qualify row_number() over (
        partition by checkpoint_resources.training_run, checkpoint_resources.resource_id, checkpoint_resources.meter
        order by ratios.price_ratio, ratios.colder_class
    ) = 1
),

cold_items as (
    select
        training_run,
        'cold_checkpoints' as kind,
        any_value(currency) as currency,
        round(sum(per_month) * (1 - price_ratio), 10) as estimated_saving,
        'resource ' || resource_id || ': ' || format('{:,.2f}', sum(cost_after_end)) || ' charged from the run''s end '
            || strftime(any_value(end_time), '%Y-%m-%d %H:%M') || ' UTC to ' || strftime(max(last_charge), '%Y-%m-%d')
            || ', ' || format('{:,.2f}', sum(per_month)) || ' a month in ' || storage_class || '; ' || colder_class
            || ' is listed at ' || format('{:.1f}', 100 * price_ratio) || ' % of its price (storage_price_ratios.csv, '
            || 'read ' || any_value(retrieved) || ')' as evidence,
        'Move the checkpoints of ' || resource_id || ' that no restart needs to ' || colder_class
            || ' (a lifecycle rule), or delete them.' as action
    from (
        select *, decimal_divide(cost_after_end * 720 * 3600, seconds_after_end) as per_month
        from colder
    ) as monthly
    group by training_run, resource_id, storage_class, colder_class, price_ratio
),

items as (
    select * from checkpoint_items
    union all by name
    select * from idle_items
    union all by name
    select * from commit_items
    union all by name
    select * from cold_items
    union all by name
    select * from waste_kind_items
),

final as (
    select
        training_run,
        cast(null as varchar) as cluster,
        kind,
        estimated_saving,
        currency,
        evidence,
        action
    from items
    where estimated_saving > 0
)

select * from final
order by estimated_saving desc, training_run, kind;

-- name: left_out
-- Rebuilds recommendations_left_out: per run with attributed spend, each recommendation whose
-- inputs are missing: checkpoint_interval (recommendation_checkpoints.missing),
-- commit_on_demand_gpus (on-demand GPU-hours but no committed ones), cold_checkpoints (checkpoint
-- storage after the end with no listed price ratio for its provider and class) and
-- low_gpu_utilization (no GPU telemetry).
insert into recommendations_left_out by name
with checkpoint_inputs as (
    select training_run, missing from recommendation_checkpoints
),

pricing as (
    select * from run_pricing
),

utilization as (
    select distinct training_run from run_utilization
),

ratios as (
    select * from storage_price_ratios
),

checkpoint_storage as (
    select * from recommendation_checkpoint_storage
),

missing_commitments as (
    select training_run
    from pricing
    group by training_run
    having sum(gpu_hours) filter (where pricing = 'on_demand') > 0
        and coalesce(
            sum(gpu_hours) filter (where pricing in ('savings_plan', 'reservation', 'committed_use', 'committed')), 0
        ) = 0
),

final as (
    select training_run, 'checkpoint_interval' as kind, missing as reason
    from checkpoint_inputs
    where missing is not null
    union all
    select
        training_run,
        'commit_on_demand_gpus',
        'no committed GPU-hours to price its on-demand GPU-hours against: the run used no savings plan, '
            || 'reservation or committed use discount'
    from missing_commitments
    union all
    select distinct
        training_run,
        'cold_checkpoints',
        'no listed price ratio of a colder storage class for ' || provider || ' storage metered as ' || meter
            || ': add its row to pipelines/data/storage_price_ratios.csv'
    from checkpoint_storage
    where not exists (
        select 1 from ratios
        where ratios.provider = checkpoint_storage.provider and checkpoint_storage.meter glob ratios.meter
    )
    union all
    select
        training_run,
        'low_gpu_utilization',
        'no GPU telemetry: add a prometheus source with the DCGM exporter''s series for the run''s nodes'
    from checkpoint_inputs
    where training_run not in (select training_run from utilization)
)

select * from final
order by training_run, kind;

-- name: count
-- Rows of recommendations.
select count(*) from recommendations;

-- name: top
-- The ten largest recommendations across runs, for the summary and the asset's preview.
with recommended as (
    select * from recommendations
),

final as (
    select training_run, cluster, kind, estimated_saving, currency, evidence, action
    from recommended
)

select * from final
order by estimated_saving desc, training_run, kind
limit 10;
