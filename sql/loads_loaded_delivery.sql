-- The delivery of a (source, billing period)'s latest good load, when focus_line_items still
-- holds exactly the rows it loaded: an equal delivery need not be loaded again.
with latest_load as (
    select delivery, loaded_rows
    from loads
    where source_name = $source_name
        and billing_period = $billing_period
        and status = 'loaded'
    order by finished_at desc, load_id desc
    limit 1
),

present as (
    select count(*) as rows
    from focus_line_items
    where x_SourceName = $source_name
        and in_billing_period(BillingPeriodStart, $billing_period)
),

final as (
    select latest_load.delivery
    from latest_load
    cross join present
    where latest_load.loaded_rows = present.rows
)

select * from final
