-- Per file of a CUR 2.0 delivery: its rows, the raw control total Σ coalesce(net unblended,
-- unblended), its currencies, and its rows of another billing period. Reading the costs and the
-- billing period fails here on a value that is not a number or a timestamp, before any load.
with delivery as (
    select * from cur2_delivery_rows($files)
),

final as (
    select
        filename as file,
        count(*) as rows,
        coalesce(sum(coalesce(cur2_money(line_item_net_unblended_cost), cur2_money(line_item_unblended_cost))), 0)
            as billed_cost,
        count(*) filter (where date_trunc('month', bill_billing_period_start_date) <> $billing_period)
            as rows_outside_period,
        any_value(coalesce(_source_file, filename))
            filter (where date_trunc('month', bill_billing_period_start_date) <> $billing_period)
            as file_outside_period,
        list(distinct line_item_currency_code) filter (where line_item_currency_code is not null) as currencies,
        max(line_item_usage_start_date) as last_charge_start,
        max(line_item_usage_end_date) as last_charge_end
    from delivery
    group by filename
)

select * from final
