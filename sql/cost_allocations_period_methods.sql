-- Allocations of one billing period by method: rows and effective cost.
select allocation_method, count(*) as allocations, sum(effective_cost) as effective_cost
from cost_allocations
where in_billing_period(BillingPeriodStart, $billing_period)
group by allocation_method
order by allocation_method
