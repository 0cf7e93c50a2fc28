-- The reconciliation view as the asset's Markdown preview: totals per source, period and currency.
with reconciled as (
    select *
    from reconciliation
),

final as (
    select
        source_name,
        billing_period,
        currency,
        raw_rows,
        focus_rows,
        allocated_rows,
        raw_billed_cost,
        focus_billed_cost,
        allocated_billed_cost,
        allocated_effective_cost
    from reconciled
)

select * from final
order by source_name, billing_period, currency
