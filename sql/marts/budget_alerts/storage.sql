-- budget_alerts of kind `storage`: the run's storage spend per UTC charge day (spread by day,
-- run_day_parts), whose first cumulative crossing of each level the shared `cumulative_crossings`
-- finds.
insert into budget_alert_daily by name
with day_parts as (
    select * from run_day_parts()
),

final as (
    select
        training_run,
        'storage' as kind,
        charge_day,
        sum(effective_cost) as amount
    from day_parts
    where cost_category = 'storage' and training_run in (select training_run from budget_alert_plans)
    group by all
)

select * from final;
