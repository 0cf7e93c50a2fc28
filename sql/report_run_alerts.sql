-- One run's threshold crossings (budget_alerts), lowest threshold first.
select threshold, threshold_fraction, threshold_amount, crossed_on, cumulative_cost
from budget_alerts
where training_run = $training_run
order by threshold_fraction, threshold
