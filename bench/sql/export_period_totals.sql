-- The raw CUR 2.0 export's totals per billing period and currency, as lake_period_totals counts
-- them in a lake: every line item, BilledCost as the net unblended cost where AWS gives it.
with cur as (
    select * from read_parquet($files)
),

final as (
    select
        strftime(bill_billing_period_start_date, '%Y-%m') as billing_period,
        line_item_currency_code as currency,
        count(*) as line_items,
        sum(
            cast(coalesce(line_item_net_unblended_cost, line_item_unblended_cost) as decimal(38, 10))
        ) as billed_cost
    from cur
    group by strftime(bill_billing_period_start_date, '%Y-%m'), line_item_currency_code
)

select * from final
order by billing_period, currency
