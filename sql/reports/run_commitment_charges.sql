-- The unused commitment commitment rules charged to each run in $training_runs, per billing
-- period, commitment and rule (run_resource_costs: the rules' charges of unused commitment).
with requested as (
    select distinct unnest($training_runs) as training_run
),

charges as (
    select
        training_run,
        cast(date_trunc('month', billing_period_start) as date) as billing_period,
        commitment_type,
        commitment_id,
        allocation_rule,
        currency,
        effective_cost
    from run_resource_costs
    where training_run in (select training_run from requested) and unused_commitment
),

final as (
    select
        training_run,
        billing_period,
        commitment_type,
        commitment_id,
        allocation_rule,
        currency,
        sum(effective_cost) as charged_cost
    from charges
    group by all
)

select * from final
order by training_run, billing_period, commitment_id, allocation_rule
