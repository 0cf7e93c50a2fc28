-- variance_causes: each budgeted run's variance split into its causes, every level exact.

-- name: insert
-- Rebuilds variance_causes from budget_variance (the amounts every level sums to), the compute
-- baselines (planned tokens), waste (idle and recompute GPU-hours), run_progress (downtime
-- GPU-hours, tokens trained), run_pricing (GPU-hours and cost by pricing type) and run_utilization
-- (data-wait GPU-hours):
--   total = rate + usage + each other category's variance (all of compute, without rate and usage)
--   rate  = pricing_mix (each pricing type off the plan) + price (the remainder: the planned type's
--           GPU-hours and the compute spend without GPU-hours)
--   usage = idle_after_run + recompute_after_failure + restart_downtime + scope + throughput (the
--           remainder)
--   throughput = input_bound (data-wait GPU-hours) + compute_throughput (the remainder), for a run
--           with step timings only
-- A usage cause is its GPU-hours x the estimated rate, rounded to the 10th decimal, as
-- budget_variance rounds usage_variance; the two remainders make every level sum exactly. The
-- planned pricing type is the run's type whose cost per GPU-hour is nearest the estimated rate
-- (the budget prices every GPU-hour at one rate and names no mix). Uses decimal_divide.
delete from variance_causes;

insert into variance_causes by name
with variance as (
    select * from budget_variance
),

baselines as (
    select training_run, training_tokens
    from budget_baselines
    where cost_category = 'compute'
),

waste_items as (
    select training_run, kind, cost_category, gpu_hours
    from waste
    where kind in ('idle_after_run', 'recompute_after_failure')
),

progress as (
    select training_run, tokens_trained, downtime_hours, downtime_gpu_hours
    from run_progress
),

utilization as (
    select training_run, data_wait_share, data_wait_gpu_hours
    from run_utilization
),

pricing as (
    select training_run, pricing, gpu_hours, effective_cost, cost_per_gpu_hour, gpu_hours_share, resources
    from run_pricing
),

-- compute rows split into rate and usage (budgets with a resource model)
splits as (
    select
        training_run,
        currency,
        actual_cost,
        estimated_gpu_hours,
        actual_gpu_hours,
        estimated_rate,
        actual_rate,
        rate_variance,
        usage_variance
    from variance
    where cost_category = 'compute' and rate_variance is not null
),

total_children as (
    select
        training_run,
        'total' as parent,
        'rate' as cause,
        currency,
        rate_variance as amount,
        actual_gpu_hours as gpu_hours,
        'actual ' || format('{:,.4f}', coalesce(actual_rate, 0)) || ' per GPU-h against '
            || format('{:,.4f}', estimated_rate) || ' planned, over ' || format('{:,.0f}', actual_gpu_hours)
            || ' GPU-h' as evidence
    from splits
    union all
    select
        training_run,
        'total',
        'usage',
        currency,
        usage_variance,
        actual_gpu_hours - estimated_gpu_hours,
        format('{:,.0f}', actual_gpu_hours) || ' GPU-h against ' || format('{:,.0f}', estimated_gpu_hours)
            || ' planned, at the estimated ' || format('{:,.4f}', estimated_rate) || ' per GPU-h'
    from splits
    union all
    select
        training_run,
        'total',
        cost_category,
        currency,
        variance,
        actual_gpu_hours,
        case
            when estimated_cost = 0 then 'no estimate; actual ' || format('{:,.2f}', actual_cost)
            else 'actual ' || format('{:,.2f}', actual_cost) || ' against an estimate of '
                || format('{:,.2f}', estimated_cost)
        end
    from variance
    where cost_category <> 'total' and not (cost_category = 'compute' and rate_variance is not null)
),

run_waste as (
    select
        training_run,
        coalesce(sum(gpu_hours) filter (where kind = 'idle_after_run' and cost_category = 'compute'), 0)
            as idle_gpu_hours,
        coalesce(sum(gpu_hours) filter (where kind = 'recompute_after_failure'), 0) as recompute_gpu_hours,
        count(*) filter (where kind = 'recompute_after_failure') as failures
    from waste_items
    group by training_run
),

usage_inputs as (
    select
        splits.*,
        coalesce(run_waste.idle_gpu_hours, 0) as idle_gpu_hours,
        coalesce(run_waste.recompute_gpu_hours, 0) as recompute_gpu_hours,
        coalesce(run_waste.failures, 0) as failures,
        coalesce(progress.downtime_hours, 0) as downtime_hours,
        coalesce(progress.downtime_gpu_hours, 0) as downtime_gpu_hours,
        progress.tokens_trained,
        baselines.training_tokens,
        -- the GPU-hours the plan needs for the tokens trained, less the planned ones; NULL without
        -- tokens trained (unknown: the scope's amount is 0, and throughput holds the whole rest)
        case
            when progress.tokens_trained is not null and baselines.training_tokens is not null then round(
                splits.estimated_gpu_hours * decimal_divide(progress.tokens_trained, baselines.training_tokens), 10
            ) - splits.estimated_gpu_hours
        end as scope_gpu_hours
    from splits
    left join run_waste on splits.training_run = run_waste.training_run
    left join progress on splits.training_run = progress.training_run
    left join baselines on splits.training_run = baselines.training_run
),

usage_parts as (
    select
        *,
        round(idle_gpu_hours * estimated_rate, 10) as idle_amount,
        round(recompute_gpu_hours * estimated_rate, 10) as recompute_amount,
        round(downtime_gpu_hours * estimated_rate, 10) as downtime_amount,
        coalesce(round(scope_gpu_hours * estimated_rate, 10), 0) as scope_amount,
        actual_gpu_hours - idle_gpu_hours - recompute_gpu_hours - downtime_gpu_hours as working_gpu_hours
    from usage_inputs
),

usage_amounts as (
    select
        *,
        usage_variance - idle_amount - recompute_amount - downtime_amount - scope_amount as throughput_amount,
        actual_gpu_hours - estimated_gpu_hours - idle_gpu_hours - recompute_gpu_hours - downtime_gpu_hours
        - coalesce(scope_gpu_hours, 0) as throughput_gpu_hours
    from usage_parts
),

usage_children as (
    select
        training_run,
        'usage' as parent,
        'idle_after_run' as cause,
        currency,
        idle_amount as amount,
        idle_gpu_hours as gpu_hours,
        format('{:,.0f}', idle_gpu_hours) || ' GPU-h charged after the run''s end' as evidence
    from usage_amounts
    union all
    select
        training_run,
        'usage',
        'recompute_after_failure',
        currency,
        recompute_amount,
        recompute_gpu_hours,
        failures || ' failure' || if(failures = 1, '', 's') || ': ' || format('{:,.0f}', recompute_gpu_hours)
            || ' GPU-h of training since the last checkpoint redone'
    from usage_amounts
    union all
    select
        training_run,
        'usage',
        'restart_downtime',
        currency,
        downtime_amount,
        downtime_gpu_hours,
        format('{:,.2f}', downtime_hours) || ' h from failure to resume: ' || format('{:,.0f}', downtime_gpu_hours)
            || ' GPU-h'
    from usage_amounts
    union all
    select
        training_run,
        'usage',
        'scope',
        currency,
        scope_amount,
        scope_gpu_hours,
        case
            when tokens_trained is null then 'no tokens trained known: the planned tokens taken as trained'
            else format('{:,}', tokens_trained) || ' of ' || format('{:,.0f}', training_tokens)
                || ' planned tokens trained, '
                || format('{:.1f}', 100 * decimal_divide(tokens_trained, training_tokens)) || ' %'
        end
    from usage_amounts
    union all
    select
        training_run,
        'usage',
        'throughput',
        currency,
        throughput_amount,
        throughput_gpu_hours,
        case
            when tokens_trained is null or working_gpu_hours <= 0
                then 'no tokens trained known: throughput and scope together'
            else format('{:,.0f}', decimal_divide(tokens_trained, working_gpu_hours * 3600))
                || ' tokens per second per GPU while training, against '
                || format('{:,.0f}', decimal_divide(training_tokens, estimated_gpu_hours * 3600)) || ' planned'
        end
    from usage_amounts
),

-- where the run's step timings say how long it waited for data: throughput = input_bound (the
-- data-wait GPU-hours at the estimated rate) + compute_throughput (the remainder)
data_waits as (
    select
        training_run,
        sum(data_wait_gpu_hours) as wait_gpu_hours,
        count(*) filter (where data_wait_share is not null) as timed_hours
    from utilization
    group by training_run
    having count(*) filter (where data_wait_share is not null) > 0
),

throughput_children as (
    select
        usage_amounts.training_run,
        'throughput' as parent,
        'input_bound' as cause,
        usage_amounts.currency,
        round(data_waits.wait_gpu_hours * usage_amounts.estimated_rate, 10) as amount,
        data_waits.wait_gpu_hours as gpu_hours,
        format('{:,.1f}', data_waits.wait_gpu_hours) || ' GPU-hours waiting for data over ' || data_waits.timed_hours
            || ' hour' || if(data_waits.timed_hours = 1, '', 's') || ' with step timings, at the estimated '
            || format('{:,.4f}', usage_amounts.estimated_rate) || ' per GPU-hour' as evidence
    from usage_amounts
    inner join data_waits on usage_amounts.training_run = data_waits.training_run
    union all
    select
        usage_amounts.training_run,
        'throughput',
        'compute_throughput',
        usage_amounts.currency,
        usage_amounts.throughput_amount - round(data_waits.wait_gpu_hours * usage_amounts.estimated_rate, 10),
        usage_amounts.throughput_gpu_hours - data_waits.wait_gpu_hours,
        'the rest of the throughput cause: steps slower than planned while the GPUs were not waiting for data'
    from usage_amounts
    inner join data_waits on usage_amounts.training_run = data_waits.training_run
),

-- the planned pricing type: its cost per GPU-hour nearest the estimated rate
priced as (
    select
        pricing.*,
        splits.currency,
        splits.estimated_rate,
        row_number() over (
            partition by pricing.training_run
            order by abs(pricing.cost_per_gpu_hour - splits.estimated_rate), pricing.gpu_hours desc, pricing.pricing
        ) = 1 as is_planned
    from pricing
    inner join splits on pricing.training_run = splits.training_run
),

mix_children as (
    select
        training_run,
        'rate' as parent,
        'pricing_mix' as cause,
        pricing,
        currency,
        effective_cost - round(gpu_hours * estimated_rate, 10) as amount,
        gpu_hours,
        resources || ' resource' || if(resources = 1, '', 's') || ' ' || replace(pricing, '_', ' ') || ': '
            || format('{:,.0f}', gpu_hours) || ' GPU-hours, ' || format('{:.1f}', 100 * gpu_hours_share)
            || ' % of the run''s, at ' || format('{:,.4f}', cost_per_gpu_hour)
            || ' per GPU-hour instead of the estimated ' || format('{:,.4f}', estimated_rate) as evidence
    from priced
    where not is_planned
),

priced_totals as (
    select training_run, sum(effective_cost) as gpu_cost
    from priced
    group by training_run
),

mix_totals as (
    select training_run, sum(amount) as mix_amount
    from mix_children
    group by training_run
),

run_rates as (
    select
        splits.training_run,
        splits.currency,
        splits.estimated_rate,
        splits.rate_variance,
        -- compute spend on lines without GPU-hours (CPU instances, a GPU VM's vCPUs and memory)
        splits.actual_cost - coalesce(priced_totals.gpu_cost, 0) as other_compute_cost,
        coalesce(mix_totals.mix_amount, 0) as mix_amount
    from splits
    left join priced_totals on splits.training_run = priced_totals.training_run
    left join mix_totals on splits.training_run = mix_totals.training_run
),

price_children as (
    select
        run_rates.training_run,
        'rate' as parent,
        'price' as cause,
        planned.pricing,
        run_rates.currency,
        run_rates.rate_variance - run_rates.mix_amount as amount,
        planned.gpu_hours,
        case
            when planned.pricing is null then 'no GPU-hours priced'
            else format('{:,.0f}', planned.gpu_hours) || ' GPU-h ' || replace(planned.pricing, '_', ' ') || ' at '
                || format('{:,.4f}', planned.cost_per_gpu_hour) || ' per GPU-h'
        end
        || case
            when run_rates.other_compute_cost = 0 then ''
            else ', and ' || format('{:,.2f}', run_rates.other_compute_cost) || ' of compute without GPU-hours'
        end
        || ' against the estimated ' || format('{:,.4f}', run_rates.estimated_rate) || ' per GPU-h' as evidence
    from run_rates
    left join (select * from priced where is_planned) as planned on run_rates.training_run = planned.training_run
),

final as (
    select * from total_children
    union all by name
    select * from usage_children
    union all by name
    select * from throughput_children
    union all by name
    select * from mix_children
    union all by name
    select * from price_children
)

select * from final
order by training_run, parent, cause, pricing;

-- name: count
-- Rows of variance_causes.
select count(*) from variance_causes;
