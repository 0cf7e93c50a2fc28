-- One billing period of focus_line_items per source and currency, beside the raw control totals
-- of the source's latest good load of that period.
with period_rows as (
    select *
    from focus_line_items
    where cast(date_trunc('month', BillingPeriodStart) as date) = $billing_period
),

latest_loads as (
    select source_name, raw_rows, raw_billed_cost, delivery
    from loads
    where status = 'loaded' and billing_period = $billing_period
    qualify row_number() over (partition by source_name order by finished_at desc, load_id desc) = 1
),

focus as (
    select
        x_SourceName as source_name,
        BillingCurrency as currency,
        count(*) as rows,
        sum(BilledCost) as billed_cost,
        sum(EffectiveCost) as effective_cost,
        sum(x_GpuHours) as gpu_hours
    from period_rows
    group by all
),

final as (
    select
        focus.source_name,
        focus.currency,
        focus.rows,
        latest_loads.raw_rows,
        focus.billed_cost,
        latest_loads.raw_billed_cost,
        focus.effective_cost,
        focus.gpu_hours,
        latest_loads.delivery
    from focus
    left join latest_loads using (source_name)
)

select * from final
order by source_name, currency
