-- Attribution of one billing period (SPEC §6): step 1 (the line's own tags, first configured key
-- wins) and step 5 (unattributed). experiment, dataset_version and owner come from the line's
-- tags, else from the run registry for lines of a known run. One row per line item, ratio 1.
insert into cost_allocations by name
with line_items as (
    select *
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
        line_dimensions.training_run,
        coalesce(line_dimensions.experiment, registry.experiment) as experiment,
        coalesce(line_dimensions.dataset_version, registry.dataset_version) as dataset_version,
        coalesce(line_dimensions.owner, registry.owner) as owner,
        case when line_dimensions.training_run is null then 'unattributed' else 'tag' end as allocation_method,
        case
            when line_dimensions.training_run is not null then 'tag ' || line_dimensions.training_run_key
        end as allocation_rule,
        1 as allocation_ratio,
        coalesce(line_items.BilledCost, 0) as billed_cost,
        coalesce(line_items.EffectiveCost, 0) as effective_cost,
        line_items.x_GpuHours as gpu_hours
    from line_items
    left join line_dimensions on line_items.x_LineItemKey = line_dimensions.x_LineItemKey
    left join registry on line_dimensions.training_run = registry.training_run
)

select * from final
