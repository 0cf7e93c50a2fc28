-- Budget alerts (budget_alerts) for the reports.

-- name: all
-- Every threshold crossing of every kind, runs', idle GPU instances', group budgets' and the series'
-- beyond runs, earliest first.
select
    kind,
    training_run,
    resource_id,
    series,
    threshold,
    threshold_fraction,
    threshold_amount,
    unit,
    observed,
    crossed_on,
    cumulative_cost,
    currency,
    scope_kind,
    scope,
    period
from budget_alerts
order by
    crossed_on, kind, coalesce(training_run, resource_id, series), scope_kind, scope, period, threshold_fraction,
    threshold;

-- name: by_run
-- The alerts of each run in $training_runs (report_run): its own, and those of the idle GPU
-- instances (idle_gpus) it was charged for at any time (a cluster node it shared, an instance it
-- idled on before or after), earliest first.
with requested as (
    select distinct unnest($training_runs) as training_run
),

alerts as (
    select * from budget_alerts
),

idle_instances as (
    select distinct resource_id from alerts
    where kind = 'idle_gpus'
),

run_instances as (
    select distinct cost_allocations.training_run, cost_allocations.ResourceId as resource_id
    from cost_allocations
    where cost_allocations.ResourceId in (select resource_id from idle_instances)
        and cost_allocations.training_run in (select training_run from requested)
),

final as (
    select alerts.training_run as report_run, alerts.*
    from alerts
    where alerts.training_run in (select training_run from requested)
    union all
    select run_instances.training_run as report_run, alerts.*
    from alerts
    inner join run_instances on alerts.resource_id = run_instances.resource_id
    where alerts.kind = 'idle_gpus'
)

select
    report_run,
    kind,
    training_run,
    resource_id,
    threshold,
    threshold_fraction,
    threshold_amount,
    unit,
    observed,
    crossed_on,
    cumulative_cost,
    currency
from final
order by report_run, crossed_on, kind, resource_id, threshold_fraction, threshold;
