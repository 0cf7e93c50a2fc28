-- `runledger migrate`: a warehouse file of an earlier version, attached as `legacy`, copied into the
-- lake table by table (pipelines/warehouse/migrate.py).

-- name: line_items
-- How many line items the lake holds already (a migration writes into an empty lake only).
select count(*) as line_items from focus_line_items;

-- name: common_columns
-- Per table of the lake, the columns the legacy file's table has too, in the lake's column order:
-- a column added since is left to its default, a column dropped since is not copied.
with lake_tables as (
    select table_name
    from duckdb_tables()
    where database_name = 'lake' and schema_name = 'main'
),

lake_columns as (
    select table_name, column_name, column_index
    from duckdb_columns()
    where database_name = 'lake' and schema_name = 'main'
),

legacy_columns as (
    select table_name, column_name
    from duckdb_columns()
    where database_name = 'legacy' and schema_name = 'main'
),

final as (
    select
        lake_columns.table_name,
        list(lake_columns.column_name order by lake_columns.column_index) as columns
    from lake_columns
    inner join legacy_columns
        on lake_columns.table_name = legacy_columns.table_name
        and lake_columns.column_name = legacy_columns.column_name
    where lake_columns.table_name in (select lake_tables.table_name from lake_tables)
    group by lake_columns.table_name
)

select * from final
order by table_name;

-- name: main_tables
-- The tables and views of a DuckDB file opened on its own: whether it is a warehouse of an
-- earlier RunLedger (it holds focus_line_items).
select table_name
from duckdb_tables()
where schema_name = 'main'
union
select view_name as table_name
from duckdb_views()
where schema_name = 'main' and not internal
order by table_name;
