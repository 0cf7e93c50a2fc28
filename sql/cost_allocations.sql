-- Splits the line items of one billing period by their integer shares in `allocation_shares`
-- (steps 1, 2, 3 and 5 of SPEC §6 from sql/attribution_shares.sql, then step 4 from
-- sql/attribution_shared_shares.sql) and appends the parts to cost_allocations.
-- Every line's parts are split in units of 1e-10 by largest remainder, so ratios sum to exactly 1
-- and billed, effective cost and GPU-hours to exactly the line's.
-- experiment, dataset_version and owner of a part: the line's own tags, else its resource tag
-- snapshot (unless the snapshot names another run), else the registry entry of the part's run. A
-- shared part describes its run, not the shared line: the registry entry, else the value carrying
-- most of the run's step 1-3 effective cost in the period (ties by value).
insert into cost_allocations by name
with shares as (
    select * from allocation_shares
    where share > 0
),

line_items as (
    select *
    from focus_line_items
    where in_billing_period(BillingPeriodStart, $billing_period)
        and x_LineItemKey in (select x_LineItemKey from shares)
),

dimensions as (
    select * from line_dimensions
),

registry as (
    select * from run_registry
),

claimed_allocations as (
    select training_run, experiment, dataset_version, owner, abs(effective_cost) as weight
    from cost_allocations
    where in_billing_period(BillingPeriodStart, $billing_period)
        and allocation_method in ('tag', 'resource_tags', 'registry')
),

run_values as (
    select training_run, 'experiment' as dimension, experiment as value, sum(weight) as weight
    from claimed_allocations where experiment is not null group by all
    union all
    select training_run, 'dataset_version', dataset_version, sum(weight)
    from claimed_allocations where dataset_version is not null group by all
    union all
    select training_run, 'owner', owner, sum(weight)
    from claimed_allocations where owner is not null group by all
),

run_dimensions as (
    select
        training_run,
        first(value order by weight desc, value) filter (where dimension = 'experiment') as experiment,
        first(value order by weight desc, value) filter (where dimension = 'dataset_version') as dataset_version,
        first(value order by weight desc, value) filter (where dimension = 'owner') as owner
    from run_values
    group by training_run
),

-- a line with one part keeps its amounts as they are; only lines with several parts are split
whole_parts as (
    select
        shares.x_LineItemKey,
        shares.training_run,
        shares.allocation_method,
        shares.allocation_rule,
        cast(1 as decimal(38, 10)) as allocation_ratio,
        coalesce(line_items.BilledCost, 0) as billed_cost,
        coalesce(line_items.EffectiveCost, 0) as effective_cost,
        coalesce(line_items.x_GpuHours, 0) as gpu_hours
    from shares
    inner join line_items on shares.x_LineItemKey = line_items.x_LineItemKey
    where shares.share = shares.total_share
),

parts as (
    select
        shares.*,
        cast(10000000000 as hugeint) as ratio_units,
        cast(coalesce(line_items.BilledCost, 0) * 10000000000 as hugeint) as billed_units,
        cast(coalesce(line_items.EffectiveCost, 0) * 10000000000 as hugeint) as effective_units,
        cast(coalesce(line_items.x_GpuHours, 0) * 10000000000 as hugeint) as gpu_units
    from shares
    inner join line_items on shares.x_LineItemKey = line_items.x_LineItemKey
    where shares.share < shares.total_share
),

floored as (
    select
        *,
        ratio_units * share // total_share as ratio_floor,
        ratio_units * share % total_share as ratio_remainder,
        abs(billed_units) * share // total_share as billed_floor,
        abs(billed_units) * share % total_share as billed_remainder,
        abs(effective_units) * share // total_share as effective_floor,
        abs(effective_units) * share % total_share as effective_remainder,
        abs(gpu_units) * share // total_share as gpu_floor,
        abs(gpu_units) * share % total_share as gpu_remainder
    from parts
),

-- largest remainder: the units left after flooring go one each to the parts with the largest
-- remainders (ties: attributed targets before unattributed, then by run id)
ranked as (
    select
        *,
        ratio_units - sum(ratio_floor) over line_parts as ratio_left,
        row_number() over (partition by x_LineItemKey order by ratio_remainder desc, training_run nulls last) as ratio_rank,
        abs(billed_units) - sum(billed_floor) over line_parts as billed_left,
        row_number() over (partition by x_LineItemKey order by billed_remainder desc, training_run nulls last) as billed_rank,
        abs(effective_units) - sum(effective_floor) over line_parts as effective_left,
        row_number() over (partition by x_LineItemKey order by effective_remainder desc, training_run nulls last) as effective_rank,
        abs(gpu_units) - sum(gpu_floor) over line_parts as gpu_left,
        row_number() over (partition by x_LineItemKey order by gpu_remainder desc, training_run nulls last) as gpu_rank
    from floored
    window line_parts as (partition by x_LineItemKey)
),

split_parts as (
    select
        x_LineItemKey,
        training_run,
        allocation_method,
        allocation_rule,
        ratio_floor + case when ratio_rank <= ratio_left then 1 else 0 end as ratio_part,
        sign(billed_units) * (billed_floor + case when billed_rank <= billed_left then 1 else 0 end) as billed_part,
        sign(effective_units) * (effective_floor + case when effective_rank <= effective_left then 1 else 0 end) as effective_part,
        sign(gpu_units) * (gpu_floor + case when gpu_rank <= gpu_left then 1 else 0 end) as gpu_part
    from ranked
),

allocated as (
    select * from whole_parts

    union all

    select
        x_LineItemKey,
        training_run,
        allocation_method,
        allocation_rule,
        cast(cast(ratio_part as decimal(38, 10)) * cast(0.0000000001 as decimal(11, 10)) as decimal(38, 10)) as allocation_ratio,
        cast(cast(billed_part as decimal(38, 10)) * cast(0.0000000001 as decimal(11, 10)) as decimal(38, 10)) as billed_cost,
        cast(cast(effective_part as decimal(38, 10)) * cast(0.0000000001 as decimal(11, 10)) as decimal(38, 10)) as effective_cost,
        cast(cast(gpu_part as decimal(38, 10)) * cast(0.0000000001 as decimal(11, 10)) as decimal(38, 10)) as gpu_hours
    from split_parts
),

line_runs as (
    select
        allocated.*,
        dimensions.snapshot_training_run is null
            or dimensions.snapshot_training_run = allocated.training_run as snapshot_applies
    from allocated
    left join dimensions on allocated.x_LineItemKey = dimensions.x_LineItemKey
),

final as (
    select
        line_items.x_LineItemKey,
        line_items.x_SourceName,
        line_items.BillingPeriodStart,
        line_items.BillingCurrency,
        line_items.ChargePeriodStart,
        line_items.ChargePeriodEnd,
        line_items.ProviderName,
        line_items.SubAccountId,
        line_items.ServiceName,
        line_items.x_CostCategory,
        line_items.ResourceId,
        allocated.training_run,
        case
            when allocated.allocation_method = 'shared' then coalesce(registry.experiment, run_dimensions.experiment)
            else coalesce(dimensions.tag_experiment, case when allocated.snapshot_applies then dimensions.snapshot_experiment end, registry.experiment)
        end as experiment,
        case
            when allocated.allocation_method = 'shared' then coalesce(registry.dataset_version, run_dimensions.dataset_version)
            else coalesce(dimensions.tag_dataset_version, case when allocated.snapshot_applies then dimensions.snapshot_dataset_version end, registry.dataset_version)
        end as dataset_version,
        case
            when allocated.allocation_method = 'shared' then coalesce(registry.owner, run_dimensions.owner)
            else coalesce(dimensions.tag_owner, case when allocated.snapshot_applies then dimensions.snapshot_owner end, registry.owner)
        end as owner,
        allocated.allocation_method,
        allocated.allocation_rule,
        allocated.allocation_ratio,
        allocated.billed_cost,
        allocated.effective_cost,
        allocated.gpu_hours
    from line_runs as allocated
    inner join line_items on allocated.x_LineItemKey = line_items.x_LineItemKey
    left join dimensions on allocated.x_LineItemKey = dimensions.x_LineItemKey
    left join registry on allocated.training_run = registry.training_run
    left join run_dimensions on allocated.training_run = run_dimensions.training_run
)

select * from final
