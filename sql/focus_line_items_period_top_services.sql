-- The most expensive services of a billing period: the Markdown preview of focus_line_items.
with period_rows as (
    select *
    from focus_line_items
    where cast(date_trunc('month', BillingPeriodStart) as date) = $billing_period
),

final as (
    select
        ProviderName as provider,
        ServiceName as service,
        x_CostCategory as cost_category,
        BillingCurrency as currency,
        count(*) as rows,
        sum(EffectiveCost) as effective_cost
    from period_rows
    group by all
)

select * from final
order by abs(effective_cost) desc, provider, service
limit $limit
