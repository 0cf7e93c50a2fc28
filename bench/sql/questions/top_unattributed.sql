-- The 20 largest pieces of unattributed spend.
select
    account,
    service,
    resource,
    billing_period,
    effective_cost
from unattributed_costs
order by effective_cost desc
limit 20
