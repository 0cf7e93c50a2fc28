-- The tables, views and columns of the warehouse schema and their comments (DuckDB's catalog).

-- name: comments
-- Every comment the catalog stores on a table, a view or one of their columns (NULL where none
-- is stored), names lower case: what `comment on` statements compare with before writing.
with relations as (
    select 'table' as kind, table_name as relation, comment
    from duckdb_tables()
    where database_name = current_database() and schema_name = current_schema()
    union all
    select 'view', view_name, comment
    from duckdb_views()
    where database_name = current_database() and schema_name = current_schema() and not internal
),

columns as (
    select table_name as relation, column_name, comment
    from duckdb_columns()
    where database_name = current_database() and schema_name = current_schema()
),

final as (
    select kind, lower(relation) as relation, null as column_name, comment
    from relations
    union all
    select relations.kind || ' column', lower(columns.relation), lower(columns.column_name), columns.comment
    from columns
    inner join relations on columns.relation = relations.relation
)

select * from final;

-- name: relations
-- The tables and views of the warehouse schema with their comments, by name.
with relations as (
    select table_name as relation, 'table' as kind, comment
    from duckdb_tables()
    where database_name = current_database() and schema_name = current_schema()
    union all
    select view_name, 'view', comment
    from duckdb_views()
    where database_name = current_database() and schema_name = current_schema() and not internal
),

final as (
    select relation, kind, comment
    from relations
)

select * from final
order by relation;

-- name: columns
-- The columns of every table and view of the warehouse schema, in their order, with their type,
-- whether they may be NULL and their comments.
with columns as (
    select table_name as relation, column_index, column_name, data_type, is_nullable, comment
    from duckdb_columns()
    where database_name = current_database() and schema_name = current_schema()
),

final as (
    select relation, column_name, data_type, is_nullable, comment
    from columns
    order by relation, column_index
)

select * from final;

-- name: is_not_null
-- Whether a column of a table of the warehouse schema is NOT NULL (pipelines.warehouse.comments).
with columns as (
    select table_name, column_name, is_nullable
    from duckdb_columns()
    where database_name = current_database() and schema_name = current_schema()
),

final as (
    select count(*) > 0 as is_not_null
    from columns
    where table_name = $table_name and column_name = $column_name and not is_nullable
)

select * from final;

-- name: is_view
-- Whether a name of the warehouse schema is a view (pipelines.warehouse.comments).
with views as (
    select view_name
    from duckdb_views()
    where database_name = current_database() and schema_name = current_schema() and not internal
),

final as (
    select count(*) > 0 as is_view
    from views
    where view_name = $view_name
)

select * from final;
