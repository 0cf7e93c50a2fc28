-- Daily spend of one training run (the first of the bench's runs).
select
    cast(ChargePeriodStart as date) as charge_date,
    sum(effective_cost) as effective_cost
from cost_allocations
where training_run = 'run-000'
group by cast(ChargePeriodStart as date)
order by charge_date
