-- What `python -m bench scale-out` checks in each lake: per billing period and currency, the
-- line items loaded from the export (not the rows derived beside them) and their BilledCost.
with focus as (
    select * from focus_line_items
    where x_DerivedFrom is null
),

final as (
    select
        strftime(BillingPeriodStart, '%Y-%m') as billing_period,
        BillingCurrency as currency,
        count(*) as line_items,
        sum(BilledCost) as billed_cost
    from focus
    group by strftime(BillingPeriodStart, '%Y-%m'), BillingCurrency
)

select * from final
order by billing_period, currency
