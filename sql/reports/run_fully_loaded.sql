-- Each run in $training_runs per billing period and currency: its direct cost and its shares of
-- the spend no run owns (run_costs_fully_loaded).
select
    training_run,
    billing_period,
    currency,
    direct_cost,
    idle_capacity_share,
    unused_commitment_share,
    tax_share,
    support_share,
    other_unattributed_share,
    fully_loaded_cost
from run_costs_fully_loaded
where training_run in (select unnest($training_runs))
order by training_run, billing_period, currency
