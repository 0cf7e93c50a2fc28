-- One source's rows of one billing period in focus_line_items, and their totals.
with period_rows as (
    select BilledCost, EffectiveCost, BillingCurrency
    from focus_line_items
    where x_SourceName = $source_name and in_billing_period(BillingPeriodStart, $billing_period)
),

final as (
    select
        count(*) as rows,
        coalesce(sum(BilledCost), 0) as billed_cost,
        coalesce(sum(EffectiveCost), 0) as effective_cost,
        string_agg(distinct BillingCurrency, ',' order by BillingCurrency) as currency_list
    from period_rows
)

select * from final
