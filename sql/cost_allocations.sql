-- Attribution of one billing period (SPEC §6), first step that applies:
-- Shares and amounts are integers (HUGEINT; seconds, weights × 10^4, units of 1e-10): no
-- floating point anywhere in a split.
--   1. tag: the line's own tags (first configured key of each dimension wins);
--   3. registry: lines whose ResourceId matches a registered run's glob within its window
--      [start, end). A run's share of a line is weight × overlap; the line's covered fraction is
--      its longest overlap ÷ its duration, the rest stays unattributed (a line crossing a window
--      edge is split). Several matching runs split the covered part by weight × overlap;
--   5. unattributed.
-- Every line's parts are split in units of 1e-10 by largest remainder, so ratios sum to exactly 1
-- and billed, effective cost and GPU-hours to exactly the line's. experiment, dataset_version and
-- owner come from the line's tags, else from the registry entry of its run.
insert into cost_allocations by name
with line_items as (
    select
        *,
        coalesce(ChargePeriodEnd, ChargePeriodStart) as charge_end,
        greatest(date_diff('second', ChargePeriodStart, coalesce(ChargePeriodEnd, ChargePeriodStart)), 0) as duration_seconds
    from focus_line_items
    where date_trunc('month', BillingPeriodStart) = $billing_period
),

dimension_keys as (
    select dimension, tag_key, normalize_tag_key(tag_key) as key_norm, priority
    from attribution_keys
),

registry as (
    select * from run_registry
),

registry_patterns as (
    select
        training_run,
        window_start,
        window_end,
        cast(round(weight * 10000) as hugeint) as weight_units,
        unnest(resources) as pattern
    from registry
),

line_tags as (
    select
        x_LineItemKey,
        entry.key as tag_key,
        normalize_tag_key(entry.key) as key_norm,
        nullif(trim(entry.value), '') as tag_value
    from (select x_LineItemKey, unnest(map_entries(Tags)) as entry from line_items)
),

matched_tags as (
    select
        line_tags.x_LineItemKey,
        dimension_keys.dimension,
        arg_min(line_tags.tag_value, dimension_keys.priority) as tag_value,
        arg_min(line_tags.tag_key, dimension_keys.priority) as tag_key
    from line_tags
    inner join dimension_keys on line_tags.key_norm = dimension_keys.key_norm
    where line_tags.tag_value is not null
    group by line_tags.x_LineItemKey, dimension_keys.dimension
),

line_dimensions as (
    select
        x_LineItemKey,
        max(tag_value) filter (where dimension = 'training_run') as training_run,
        max(tag_key) filter (where dimension = 'training_run') as training_run_key,
        max(tag_value) filter (where dimension = 'experiment') as experiment,
        max(tag_value) filter (where dimension = 'dataset_version') as dataset_version,
        max(tag_value) filter (where dimension = 'owner') as owner
    from matched_tags
    group by x_LineItemKey
),

registry_overlaps as (
    select
        line_items.x_LineItemKey,
        registry_patterns.training_run,
        any_value(registry_patterns.weight_units) as weight_units,
        min(registry_patterns.pattern) as pattern,
        any_value(
            case
                when line_items.duration_seconds = 0 then
                    case
                        when line_items.ChargePeriodStart >= coalesce(registry_patterns.window_start, line_items.ChargePeriodStart)
                            and line_items.ChargePeriodStart < coalesce(registry_patterns.window_end, line_items.ChargePeriodStart + interval 1 second)
                        then 1 else 0
                    end
                else greatest(
                    date_diff(
                        'second',
                        greatest(line_items.ChargePeriodStart, coalesce(registry_patterns.window_start, line_items.ChargePeriodStart)),
                        least(line_items.charge_end, coalesce(registry_patterns.window_end, line_items.charge_end))
                    ),
                    0
                )
            end
        ) as overlap_seconds
    from line_items
    left join line_dimensions on line_items.x_LineItemKey = line_dimensions.x_LineItemKey
    inner join registry_patterns on line_items.ResourceId glob registry_patterns.pattern
    where line_dimensions.training_run is null
    group by line_items.x_LineItemKey, registry_patterns.training_run
    having any_value(registry_patterns.weight_units) > 0
),

registry_lines as (
    select
        x_LineItemKey,
        max(overlap_seconds) as covered_seconds,
        sum(cast(overlap_seconds as hugeint) * weight_units) as weighted_overlap
    from registry_overlaps
    where overlap_seconds > 0
    group by x_LineItemKey
),

-- integer shares of each line: one part per target, parts summing to total_share
shares as (
    select
        line_items.x_LineItemKey,
        line_dimensions.training_run,
        'tag' as allocation_method,
        'tag ' || line_dimensions.training_run_key as allocation_rule,
        cast(1 as hugeint) as share,
        cast(1 as hugeint) as total_share
    from line_items
    inner join line_dimensions on line_items.x_LineItemKey = line_dimensions.x_LineItemKey
    where line_dimensions.training_run is not null

    union all

    select
        registry_overlaps.x_LineItemKey,
        registry_overlaps.training_run,
        'registry' as allocation_method,
        'registry ' || registry_overlaps.pattern as allocation_rule,
        cast(registry_lines.covered_seconds as hugeint) * registry_overlaps.overlap_seconds * registry_overlaps.weight_units as share,
        greatest(cast(line_items.duration_seconds as hugeint), 1) * registry_lines.weighted_overlap as total_share
    from registry_overlaps
    inner join registry_lines on registry_overlaps.x_LineItemKey = registry_lines.x_LineItemKey
    inner join line_items on registry_overlaps.x_LineItemKey = line_items.x_LineItemKey
    where registry_overlaps.overlap_seconds > 0

    union all

    select
        line_items.x_LineItemKey,
        null as training_run,
        'unattributed' as allocation_method,
        case when registry_lines.x_LineItemKey is not null then 'outside registry window' end as allocation_rule,
        case
            when registry_lines.x_LineItemKey is null then cast(1 as hugeint)
            else (greatest(cast(line_items.duration_seconds as hugeint), 1) - registry_lines.covered_seconds)
                * registry_lines.weighted_overlap
        end as share,
        case
            when registry_lines.x_LineItemKey is null then cast(1 as hugeint)
            else greatest(cast(line_items.duration_seconds as hugeint), 1) * registry_lines.weighted_overlap
        end as total_share
    from line_items
    left join line_dimensions on line_items.x_LineItemKey = line_dimensions.x_LineItemKey
    left join registry_lines on line_items.x_LineItemKey = registry_lines.x_LineItemKey
    where line_dimensions.training_run is null
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
    where shares.share > 0
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

allocated as (
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
        coalesce(line_dimensions.experiment, registry.experiment) as experiment,
        coalesce(line_dimensions.dataset_version, registry.dataset_version) as dataset_version,
        coalesce(line_dimensions.owner, registry.owner) as owner,
        allocated.allocation_method,
        allocated.allocation_rule,
        cast(cast(allocated.ratio_part as decimal(38, 10)) * cast(0.0000000001 as decimal(11, 10)) as decimal(38, 10)) as allocation_ratio,
        cast(cast(allocated.billed_part as decimal(38, 10)) * cast(0.0000000001 as decimal(11, 10)) as decimal(38, 10)) as billed_cost,
        cast(cast(allocated.effective_part as decimal(38, 10)) * cast(0.0000000001 as decimal(11, 10)) as decimal(38, 10)) as effective_cost,
        cast(cast(allocated.gpu_part as decimal(38, 10)) * cast(0.0000000001 as decimal(11, 10)) as decimal(38, 10)) as gpu_hours
    from allocated
    inner join line_items on allocated.x_LineItemKey = line_items.x_LineItemKey
    left join line_dimensions on allocated.x_LineItemKey = line_dimensions.x_LineItemKey
    left join registry on allocated.training_run = registry.training_run
)

select * from final
