-- A BigQuery snapshot of one invoice month, its rows keyed by their content: a query returns rows
-- in no stable order and the export has no row id, so a row's key is `table|hash of all its
-- fields|its place among identical rows`, and reading the same rows again gives the same keys.
copy (
    with snapshot as (
        select * from read_parquet($snapshot)
    ),

    hashed as (
        select
            snapshot.*,
            hash(snapshot) as content_hash
        from snapshot
    ),

    final as (
        select
            * exclude (content_hash),
            concat_ws('|', $table, content_hash, row_number() over (partition by content_hash) - 1) as _line_key
        from hashed
    )

    select * from final
) to $target (format parquet)
