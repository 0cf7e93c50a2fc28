-- BigQuery: the invoice months having rows exported after the watermark, with the latest
-- export_time of each. The placeholders in braces are filled with the validated table id and,
-- for ingestion-time partitioned tables, a fixed pruning clause on _PARTITIONTIME; every value
-- is a bound parameter. (No parameter names or braces in comments: the emulator and str.format
-- both read them.)
with exported as (
    select
        invoice.month as invoice_month,
        export_time
    from `{table}`
    where export_time > @watermark
        {partition_filter}
),

final as (
    select
        invoice_month,
        max(export_time) as max_export_time
    from exported
    group by invoice_month
)

select * from final
order by invoice_month
