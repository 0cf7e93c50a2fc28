-- The newest charge a source has in the warehouse (the freshness check's "as of"): the latest
-- charge start, since monthly charges end in the future.
with source_rows as (
    select ChargePeriodStart
    from focus_line_items
    where x_SourceName = $source_name
),

final as (
    select max(ChargePeriodStart) as newest_charge
    from source_rows
)

select * from final
