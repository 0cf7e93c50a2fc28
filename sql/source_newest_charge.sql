-- The newest charge a source has in the warehouse (the freshness check's "as of").
with source_rows as (
    select ChargePeriodEnd
    from focus_line_items
    where x_SourceName = $source_name
),

final as (
    select max(ChargePeriodEnd) as newest_charge
    from source_rows
)

select * from final
