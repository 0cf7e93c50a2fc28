-- A BigQuery billing source's incremental state: per billing period, the latest export_time and
-- the row count of the snapshot now loaded, and the source's export_time watermark (NULL before
-- the first load).
with source_loads as (
    select *
    from loads
    where source_name = $source_name
        and status = 'loaded'
),

latest_per_period as (
    select billing_period, snapshot_export_time, raw_rows
    from source_loads
    qualify row_number() over (
        partition by billing_period order by finished_at desc, load_id desc
    ) = 1
),

source_watermark as (
    select max(watermark) as watermark
    from source_loads
),

final as (
    select
        latest_per_period.billing_period,
        latest_per_period.snapshot_export_time,
        latest_per_period.raw_rows,
        source_watermark.watermark
    from latest_per_period
    cross join source_watermark
)

select * from final
order by billing_period;
