-- budget_alerts of kind `gpu_hours`: the run's GPU-hours (of its hourly usage lines) per UTC charge
-- day, whose first cumulative crossing of each level the shared `cumulative_crossings` finds.
insert into budget_alert_daily by name
with allocations as (
    select * from cost_allocations
),

final as (
    select
        training_run,
        'gpu_hours' as kind,
        cast(coalesce(ChargePeriodStart, BillingPeriodStart) as date) as charge_day,
        sum(gpu_hours) as amount
    from allocations
    where training_run in (select training_run from budget_alert_plans)
    group by all
)

select * from final;
