-- Dated snapshots of resource tags (AWS Resource Groups Tagging API), kept so tag history is not
-- lost: attribution step 2 uses the snapshot valid at a line's charge time.
create table if not exists resource_tag_snapshots (
    source_name varchar not null,
    snapshot_at timestamp not null,   -- when the snapshot was taken (UTC)
    region varchar,
    resource_arn varchar not null,    -- as the Tagging API returns it
    resource_key varchar not null,    -- normalize_resource_id(resource_arn): joins focus_line_items.ResourceId
    tags map(varchar, varchar) not null,  -- keys raw, as the API returns them (no `user:` prefix)
    primary key (source_name, snapshot_at, resource_arn)
);
