-- The variance causes of each run in $training_runs, in the waterfall's order: rate's causes
-- (pricing mix, other compute, then price), usage's (idle, recompute, downtime, scope,
-- throughput), then the run's other causes (rate, usage and the categories).
with requested as (
    select distinct unnest($training_runs) as training_run
),

causes as (
    select * from variance_causes
    where training_run in (select training_run from requested)
),

final as (
    select
        training_run,
        parent,
        cause,
        pricing,
        amount,
        gpu_hours,
        evidence,
        case parent when 'rate' then 1 when 'usage' then 2 else 3 end as parent_rank,
        case cause
            when 'pricing_mix' then 1
            when 'other_compute' then 2
            when 'price' then 3
            when 'idle_after_run' then 1
            when 'recompute_after_failure' then 2
            when 'restart_downtime' then 3
            when 'scope' then 4
            when 'throughput' then 5
            else 6
        end as cause_rank
    from causes
)

select training_run, parent, cause, pricing, amount, gpu_hours, evidence
from final
order by training_run, parent_rank, cause_rank, cause, pricing
