-- BigQuery: per invoice month from a first month on, its rows and their latest export_time:
-- a month whose count differs from the loaded snapshot received rows, even rows whose
-- export_time is older than the snapshot's newest. The placeholders in braces are filled with
-- the validated table id and a fixed pruning clause on _PARTITIONTIME; every value is a bound
-- parameter. (No parameter names or braces in comments: the emulator and str.format both read them.)
with exported as (
    select
        invoice.month as invoice_month,
        export_time
    from `{table}`
    where invoice.month >= @first_month
        {partition_filter}
),

final as (
    select
        invoice_month,
        count(*) as row_count,
        max(export_time) as max_export_time
    from exported
    group by invoice_month
)

select * from final
order by invoice_month
