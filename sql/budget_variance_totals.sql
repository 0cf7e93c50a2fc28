-- The `total` row of every run's budget variance.
select training_run, estimated_cost, actual_cost, variance, status
from budget_variance
where cost_category = 'total'
order by training_run
