-- Plain DuckDB over the raw CUR 2.0 Parquet files: spend by service and day, the question
-- service_daily_spend asks of focus_line_items.
with cur as (
    select * from read_parquet($files)
),

final as (
    select
        line_item_product_code as service,
        cast(line_item_usage_start_date as date) as usage_date,
        sum(cast(line_item_unblended_cost as decimal(38, 10))) as unblended_cost
    from cur
    group by line_item_product_code, cast(line_item_usage_start_date as date)
)

select * from final
order by service, usage_date
