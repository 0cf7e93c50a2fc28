-- The threshold crossings `runledger run` lists after its summary, money rounded to cents.
select
    training_run,
    threshold,
    crossed_on,
    round(threshold_amount, 2) as threshold_amount,
    round(cumulative_cost, 2) as cumulative_cost,
    currency
from budget_alerts
order by crossed_on, training_run, threshold_fraction
