-- Writes a CUR 2.0 delivery's FOCUS rows to a staging Parquet file as a staged period holds them
-- (key-value maps as entry lists), for `sql/staging/focus_line_items.sql` (insert_staged).
copy (
    select * replace (
        map_entries(Tags) as Tags,
        map_entries(x_Credits) as x_Credits,
        map_entries(x_SystemLabels) as x_SystemLabels
    )
    from cur2_focus_rows($files, $source_name, $period_label, $execution_id, $source_format, $ingested_at)
) to $target (format parquet)
