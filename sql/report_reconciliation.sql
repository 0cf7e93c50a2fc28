-- The reconciliation of every source and billing period, for the reports' reconciliation line.
with final as (
    select * from reconciliation
)

select * from final
order by source_name, billing_period, currency
