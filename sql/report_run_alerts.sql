-- Threshold crossings (budget_alerts): one run's when $training_run is given, else every run's.
select
    training_run,
    threshold,
    threshold_fraction,
    threshold_amount,
    crossed_on,
    cumulative_cost,
    currency
from budget_alerts
where $training_run is null or training_run = $training_run
order by crossed_on, training_run, threshold_fraction, threshold
