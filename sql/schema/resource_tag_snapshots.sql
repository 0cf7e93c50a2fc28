-- Dated snapshots of resource tags (AWS Resource Groups Tagging API), kept so tag history is not
-- lost: attribution step 2 uses the snapshot valid at a line's charge time.
create table if not exists resource_tag_snapshots (
    source_name varchar not null,
    snapshot_at timestamp not null,   -- when the snapshot was taken (UTC)
    region varchar,
    resource_arn varchar not null,    -- as the Tagging API returns it
    resource_key varchar not null,    -- normalize_resource_id(resource_arn): joins focus_line_items.ResourceId
    tags map(varchar, varchar) not null  -- keys raw, as the API returns them (no `user:` prefix)
);

-- What the table and each column hold (read into DuckDB's catalog, the Dagster column schemas and
-- docs/warehouse.md).
comment on table resource_tag_snapshots is
    'Dated snapshots of AWS resource tags (Resource Groups Tagging API, every configured region), one row per '
    '(aws_tags source, snapshot, resource), appended so tag history is kept. Attribution uses, for a line without '
    'a run tag of its own, the snapshot valid at its charge time: the latest taken at or before its charge end, '
    'else the earliest after it.';
comment on column resource_tag_snapshots.source_name is 'The aws_tags source the snapshot was read with.';
comment on column resource_tag_snapshots.snapshot_at is 'When the snapshot was taken, UTC; shared by all its rows.';
comment on column resource_tag_snapshots.region is 'Region the resource was listed in.';
comment on column resource_tag_snapshots.resource_arn is 'The resource''s ARN, as the Tagging API returns it.';
comment on column resource_tag_snapshots.resource_key is
    'normalize_resource_id(resource_arn) (a bucket name, an instance id): equals normalize_resource_id of '
    'focus_line_items.ResourceId for the same resource.';
comment on column resource_tag_snapshots.tags is 'The resource''s tags, key to value, keys as the API returns them.';
