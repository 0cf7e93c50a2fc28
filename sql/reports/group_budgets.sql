-- The group budgets (group_budget_variance) for the summary: each scope's periods, the total rows.
select
    scope_kind,
    scope,
    period,
    currency,
    estimated_cost,
    actual_cost,
    variance,
    variance_pct,
    status,
    forecast_at_completion
from group_budget_variance
where cost_category = 'total'
order by scope_kind, scope, period, budget_file;
