-- Cost threshold crossings (budget_alerts of kind cost) of every run.
select
    training_run,
    threshold,
    threshold_fraction,
    threshold_amount,
    crossed_on,
    cumulative_cost,
    currency
from budget_alerts
where coalesce(kind, 'cost') = 'cost'
order by crossed_on, training_run, threshold_fraction, threshold
