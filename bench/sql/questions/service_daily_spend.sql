-- Spend by service and day over focus_line_items.
select
    ServiceName,
    cast(ChargePeriodStart as date) as charge_date,
    sum(EffectiveCost) as effective_cost
from focus_line_items
group by ServiceName, cast(ChargePeriodStart as date)
order by ServiceName, charge_date
