-- Every row of the reconciliation view, read once by the reconciliation asset (its checks and
-- preview) and once by a report batch: each read recomputes the view over every line item.
with final as (
    select * from reconciliation
)

select * from final
order by source_name, billing_period, currency
