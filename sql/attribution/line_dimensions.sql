-- Attribution dimensions of each line item of one billing period (this connection only):
--   step 1, the line's own tags: per dimension, the first key the line carries with a value,
--   of the keys $<dimension>_keys lists in priority order (sql/attribution/tag_keys.sql), and of
--   the keys $custom_dimension_keys lists per custom dimension (attribution.dimensions beyond the
--   four), their values as the map custom_dimensions; and GKE cost allocation's cluster and
--   namespace labels ($gke_cluster_keys, $gke_namespace_keys);
--   step 2, the resource tag snapshot valid at the line's charge time, joined on
--   normalize_resource_id(ResourceId) = resource_key: the latest snapshot taken at or before the
--   line's charge end, else the earliest one after it. A snapshot that lists the resource without
--   run tags is valid too (the resource was untagged then). Of several rows of one resource at one
--   moment (two tag sources, two ARNs), the first by source name, then ARN.
-- Only lines with a matching tag or a snapshot get a row; only the lines of a resource with a
-- snapshot look one up.
create or replace temp table line_dimensions as
-- line_items is read twice; scanning focus_line_items again costs less than DuckDB keeping a
-- period's lines (with their Tags) as a materialized CTE
with line_items as not materialized (
    select
        rowid as line_row,
        Tags,
        normalize_resource_id(ResourceId) as resource_key,
        coalesce(ChargePeriodEnd, ChargePeriodStart) as charge_end
    from focus_line_items
    where in_billing_period(BillingPeriodStart, $billing_period)
),

dimension_keys as (
    select dimension, normalize_tag_key(tag_key) as key_norm, priority
    from attribution_keys
),

snapshots as (
    select
        resource_key,
        snapshot_at,
        first(tags order by source_name, resource_arn) as tags
    from resource_tag_snapshots
    group by resource_key, snapshot_at
),

line_tags as (
    select
        line_row,
        first_tag(Tags, $training_run_keys) as training_run_tag,
        first_tag(Tags, $experiment_keys).tag_value as experiment,
        first_tag(Tags, $dataset_version_keys).tag_value as dataset_version,
        first_tag(Tags, $owner_keys).tag_value as owner,
        custom_tags(Tags, cast($custom_dimension_keys as struct(dimension varchar, keys varchar[])[]))
            as custom_dimensions,
        -- a bill without GKE cost allocation has none of its keys: no lookup per line then
        case when len($gke_cluster_keys) > 0 then first_tag(Tags, $gke_cluster_keys).tag_value end as gke_cluster,
        case when len($gke_namespace_keys) > 0 then first_tag(Tags, $gke_namespace_keys).tag_value end
            as gke_namespace
    from line_items
),

snapshot_tags as (
    select
        resource_key,
        snapshot_at,
        entry.key as tag_key,
        normalize_tag_key(entry.key) as key_norm,
        nullif(trim(entry.value), '') as tag_value
    from (select resource_key, snapshot_at, unnest(map_entries(tags)) as entry from snapshots) as snapshot_entries
),

snapshot_matches as (
    select
        snapshot_tags.resource_key,
        snapshot_tags.snapshot_at,
        dimension_keys.dimension,
        arg_min(snapshot_tags.tag_value, dimension_keys.priority) as tag_value,
        arg_min(snapshot_tags.tag_key, dimension_keys.priority) as tag_key
    from snapshot_tags
    inner join dimension_keys on snapshot_tags.key_norm = dimension_keys.key_norm
    where snapshot_tags.tag_value is not null
    group by snapshot_tags.resource_key, snapshot_tags.snapshot_at, dimension_keys.dimension
),

snapshot_dimensions as (
    select
        snapshots.resource_key,
        snapshots.snapshot_at,
        max(snapshot_matches.tag_value) filter (where snapshot_matches.dimension = 'training_run')
            as training_run,
        max(snapshot_matches.tag_key) filter (where snapshot_matches.dimension = 'training_run')
            as training_run_key,
        max(snapshot_matches.tag_value) filter (where snapshot_matches.dimension = 'experiment')
            as experiment,
        max(snapshot_matches.tag_value) filter (where snapshot_matches.dimension = 'dataset_version')
            as dataset_version,
        max(snapshot_matches.tag_value) filter (where snapshot_matches.dimension = 'owner')
            as owner,
        map_from_entries(
            coalesce(
                list({'key': snapshot_matches.dimension, 'value': snapshot_matches.tag_value})
                    filter (where not is_built_in_dimension(snapshot_matches.dimension)),
                []
            )
        ) as custom_dimensions
    from snapshots
    left join snapshot_matches
        on snapshots.resource_key = snapshot_matches.resource_key
        and snapshots.snapshot_at = snapshot_matches.snapshot_at
    group by snapshots.resource_key, snapshots.snapshot_at
),

snapshot_lines as (
    select line_row, resource_key, charge_end
    from line_items
    semi join snapshots on line_items.resource_key = snapshots.resource_key
),

snapshot_at_or_before as (
    select snapshot_lines.line_row, snapshot_dimensions.*
    from snapshot_lines
    asof inner join snapshot_dimensions
        on snapshot_lines.resource_key = snapshot_dimensions.resource_key
        and snapshot_lines.charge_end >= snapshot_dimensions.snapshot_at
),

first_snapshot_after as (
    select snapshot_lines.line_row, snapshot_dimensions.*
    from snapshot_lines
    asof inner join snapshot_dimensions
        on snapshot_lines.resource_key = snapshot_dimensions.resource_key
        and snapshot_lines.charge_end < snapshot_dimensions.snapshot_at
),

snapshot_after as (
    select first_snapshot_after.*
    from first_snapshot_after
    anti join snapshot_at_or_before on first_snapshot_after.line_row = snapshot_at_or_before.line_row
),

line_snapshots as (
    select * from snapshot_at_or_before
    union all
    select * from snapshot_after
),

final as (
    select
        line_tags.line_row,
        line_tags.training_run_tag.tag_value as tag_training_run,
        line_tags.training_run_tag.tag_key as tag_training_run_key,
        line_tags.experiment as tag_experiment,
        line_tags.dataset_version as tag_dataset_version,
        line_tags.owner as tag_owner,
        line_tags.custom_dimensions as tag_custom_dimensions,
        line_tags.gke_cluster,
        line_tags.gke_namespace,
        line_snapshots.snapshot_at,
        line_snapshots.training_run as snapshot_training_run,
        line_snapshots.training_run_key as snapshot_training_run_key,
        line_snapshots.experiment as snapshot_experiment,
        line_snapshots.dataset_version as snapshot_dataset_version,
        line_snapshots.owner as snapshot_owner,
        line_snapshots.custom_dimensions as snapshot_custom_dimensions
    from line_tags
    left join line_snapshots on line_tags.line_row = line_snapshots.line_row
    -- filtered here, above the join: a filter in line_tags would evaluate every tag lookup twice
    where coalesce(
            line_tags.training_run_tag.tag_value, line_tags.experiment, line_tags.dataset_version, line_tags.owner,
            line_tags.gke_cluster
        ) is not null
        or cardinality(line_tags.custom_dimensions) > 0
        or line_snapshots.line_row is not null
)

select * from final
