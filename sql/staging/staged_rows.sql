-- A delivery's FOCUS rows written to a Parquet file as the mapping computes them (key-value maps
-- as entry lists), outside the warehouse: a mapping's output to inspect (`MappedDelivery.stage`).

-- name: cur2
copy (
    select * replace (
        map_entries(Tags) as Tags,
        map_entries(x_Credits) as x_Credits,
        map_entries(x_SystemLabels) as x_SystemLabels
    )
    from cur2_focus_rows($files, $source_name, $period_label, $execution_id, $source_format, $ingested_at)
) to $target (format parquet);

-- name: gcp
copy (
    select * replace (
        map_entries(Tags) as Tags,
        map_entries(x_Credits) as x_Credits,
        map_entries(x_SystemLabels) as x_SystemLabels
    )
    from gcp_focus_rows($files, $invoice_month, $source_name, $ingested_at)
) to $target (format parquet);

-- name: focus
copy (
    select * replace (
        map_entries(Tags) as Tags,
        map_entries(x_Credits) as x_Credits,
        map_entries(x_SystemLabels) as x_SystemLabels
    )
    from focus_file_rows($files, $billing_period, $select_period, $source_name, $source_format, $ingested_at)
) to $target (format parquet);
