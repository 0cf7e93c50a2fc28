-- loads: every load attempt of a (source, billing period).

-- name: insert
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
);

-- name: record_snapshot
-- The snapshot that committed a load, appended right after that commit.
insert into load_snapshots (load_id, snapshot_id, committed_at)
values ($load_id, $snapshot_id, $committed_at);

-- name: loaded_delivery
-- The delivery of a (source, billing period)'s latest good load, when focus_line_items still
-- holds exactly the rows it loaded (`focus_totals`, sql/schema/macros.sql): an equal delivery
-- need not be loaded again.
with latest_load as (
    select delivery, loaded_rows
    from loads
    where source_name = $source_name
        and billing_period = $billing_period
        and status = 'loaded'
    order by finished_at desc, load_id desc
    limit 1
),

present as (
    select coalesce(sum(line_items), 0) as rows
    from focus_totals($billing_period)
    where source_name = $source_name
),

final as (
    select latest_load.delivery
    from latest_load
    cross join present
    where latest_load.loaded_rows = present.rows
)

select * from final;
