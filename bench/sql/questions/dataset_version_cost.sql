-- Cost per dataset version.
select
    dataset_version,
    sum(effective_cost) as effective_cost
from run_costs
group by dataset_version
order by effective_cost desc
