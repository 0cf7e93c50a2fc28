-- Spend by training run and cost category.
select
    training_run,
    cost_category,
    sum(effective_cost) as effective_cost
from run_costs
group by training_run, cost_category
order by effective_cost desc
