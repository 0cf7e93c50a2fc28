-- Records one load attempt of a (source, billing period).
insert into loads (
    load_id, source_name, source_format, billing_period, delivery, files, raw_rows, raw_billed_cost,
    loaded_rows, loaded_billed_cost, loaded_effective_cost, currency, status, error, started_at, finished_at,
    snapshot_export_time, watermark
)
values (
    $load_id, $source_name, $source_format, $billing_period, $delivery, $files, $raw_rows, $raw_billed_cost,
    $loaded_rows, $loaded_billed_cost, $loaded_effective_cost, $currency, $status, $error, $started_at, $finished_at,
    $snapshot_export_time, $watermark
)
