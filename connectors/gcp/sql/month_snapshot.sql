-- BigQuery: every row of one invoice month, the columns the table has among those RunLedger
-- reads. A complete snapshot, so rows that arrived late are counted exactly once. The
-- placeholders in braces are filled with the validated table id, column names from the table's
-- schema and a fixed pruning clause on _PARTITIONTIME; every value is a bound parameter.
with month_rows as (
    select {columns}
    from `{table}`
    where invoice.month = @invoice_month
        {partition_filter}
),

final as (
    select * from month_rows
)

select * from final
