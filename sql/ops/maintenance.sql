-- The lake's upkeep (pipelines/warehouse/maintenance.py), DuckLake's own procedures.

-- name: expire_snapshots
-- Forgets the snapshots committed before $older_than: one row per snapshot expired.
call ducklake_expire_snapshots('lake', older_than => $older_than);

-- name: merge_adjacent_files
-- Rewrites a partition's small data files as fewer larger ones (same rows, a new snapshot).
call ducklake_merge_adjacent_files('lake');

-- name: cleanup_old_files
-- Deletes the data files that only snapshots expired before $older_than read: one row per file.
call ducklake_cleanup_old_files('lake', older_than => $older_than);

-- name: delete_orphaned_files
-- Deletes the data files under the data path the catalog does not know, last written before
-- $older_than: what a writer killed before its commit left behind. One row per file.
call ducklake_delete_orphaned_files('lake', older_than => $older_than);

-- name: state
-- Snapshots kept, and the data and delete files the current snapshot reads (DuckLake's own
-- metadata tables, attached beside the lake).
with snapshots as (
    select count(*) as snapshots from ducklake_snapshots('lake')
),

data_files as (
    select count(*) as data_files
    from __ducklake_metadata_lake.ducklake_data_file
    where end_snapshot is null
),

delete_files as (
    select count(*) as delete_files
    from __ducklake_metadata_lake.ducklake_delete_file
    where end_snapshot is null
),

final as (
    select snapshots.snapshots, data_files.data_files, delete_files.delete_files
    from snapshots, data_files, delete_files
)

select * from final;
