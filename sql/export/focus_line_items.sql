-- `runledger export focus`: one billing period of focus_line_items, per billing source, as the
-- warehouse holds it (pipelines/export/focus.py orders the columns and writes the files).

-- name: sources
-- The sources with line items in the billing period (its first day), the one asked for or all
-- (NULL), with their row counts.
with line_items as (
    select x_SourceName
    from focus_line_items
    where in_billing_period(BillingPeriodStart, $billing_period)
        and ($source_name is null or x_SourceName = $source_name)
),

final as (
    select x_SourceName as source_name, count(*) as line_items
    from line_items
    group by x_SourceName
)

select * from final
order by source_name;

-- name: rows
-- Every column of one source's line items in the billing period, in a stable order.
with line_items as (
    select *
    from focus_line_items
    where in_billing_period(BillingPeriodStart, $billing_period)
        and x_SourceName = $source_name
),

final as (
    select * from line_items
)

select * from final
order by x_LineItemKey;
