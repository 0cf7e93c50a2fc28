-- The lake's data files against its catalog (pipelines/warehouse/repair.py): what is missing or
-- damaged, what may be kept while it is repaired. DuckLake's own metadata tables, attached beside
-- the lake.

-- name: files
-- Every data and delete file the current snapshot reads: its table, its path relative to the
-- data path (DuckLake's schema, table and file paths joined, when relative) and the size the
-- catalog recorded.
with tables as (
    select
        t.table_id,
        t.table_name,
        case when t.path_is_relative then s.path || t.path else t.path end as table_path,
        t.path_is_relative and s.path_is_relative as relative
    from __ducklake_metadata_lake.ducklake_table as t
    inner join __ducklake_metadata_lake.ducklake_schema as s
        on t.schema_id = s.schema_id and s.end_snapshot is null
    where t.end_snapshot is null
),

files as (
    select
        table_id,
        path,
        path_is_relative,
        file_size_bytes,
        'data' as kind
    from __ducklake_metadata_lake.ducklake_data_file
    where end_snapshot is null
    union all
    select
        table_id,
        path,
        path_is_relative,
        file_size_bytes,
        'delete' as kind
    from __ducklake_metadata_lake.ducklake_delete_file
    where end_snapshot is null
),

final as (
    select
        tables.table_name,
        files.kind,
        case
            when files.path_is_relative and tables.relative then $data_path || tables.table_path || files.path
            when files.path_is_relative then tables.table_path || files.path
            else files.path
        end as path,
        case when files.path_is_relative then files.path end as partition_path,
        files.file_size_bytes
    from files
    inner join tables on files.table_id = tables.table_id
)

select * from final
order by table_name, path;

-- name: present
-- The size of every Parquet file under the data path (its content is not read).
select
    filename,
    size
from read_blob($pattern);

-- name: keep_partition
-- Copies one (source, billing period) of focus_line_items aside. Its bounds on the partition
-- columns let DuckLake skip every other partition's files, a damaged one among them.
insert into temp.repair_focus_line_items
select *
from focus_line_items
where
    x_SourceName = $source_name
    and BillingPeriodStart >= $billing_period
    and BillingPeriodStart < $billing_period + interval 1 month;
