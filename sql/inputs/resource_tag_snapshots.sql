-- Appends one dated snapshot of a tagging source from a staged Parquet file: every row shares
-- snapshot_at; resource_key joins focus_line_items.ResourceId through normalize_resource_id.
insert into resource_tag_snapshots by name
with staged as (
    select * from read_parquet($staging_file)
),

final as (
    select
        $source_name as source_name,
        cast($snapshot_at as timestamp) as snapshot_at,
        region,
        resource_arn,
        normalize_resource_id(resource_arn) as resource_key,
        map_from_entries(tags) as tags
    from staged
)

select * from final
