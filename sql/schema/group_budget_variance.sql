-- Each group budget's scope's actual spend against its amount, per period and cost category.
create table if not exists group_budget_variance (
    scope_kind varchar not null,
    scope varchar not null,
    period varchar not null,
    currency varchar not null,
    cost_category varchar not null,
    estimated_cost decimal(38, 10) not null,
    actual_cost decimal(38, 10) not null,
    variance decimal(38, 10) not null,
    variance_pct decimal(38, 10),
    status varchar not null,
    forecast_at_completion decimal(38, 10),
    elapsed decimal(38, 10) not null,
    as_of timestamp,
    budget_file varchar not null
);

-- What the table and each column hold (read into DuckDB's catalog, the Dagster column schemas and
-- docs/warehouse.md).
comment on table group_budget_variance is
    'Each group budget (budget files with scope:) against its scope''s actual (effective) spend: per period (every '
    'billing period with spend in the scope from the budget''s from: on for a monthly budget, the window for a '
    'window budget) one row per budgeted cost category and one row total. The actual is every allocation of '
    'cost_allocations carrying the scope''s value (experiment, owner, dataset_version, cluster or '
    'custom_dimensions[key]); overlapping budgets each count it. Rebuilt whole, only after reconciliation passed. '
    'Money is DECIMAL(38,10) in the budget''s currency.';
comment on column group_budget_variance.scope_kind is
    'The dimension the budget scopes: experiment, owner, dataset_version, cluster or a custom dimension.';
comment on column group_budget_variance.scope is 'The dimension''s value.';
comment on column group_budget_variance.period is
    'The period: YYYY-MM (a billing period of a monthly budget) or the window''s start date (YYYY-MM-DD).';
comment on column group_budget_variance.currency is 'The budget''s currency.';
comment on column group_budget_variance.cost_category is
    'A category the budget''s amount names, or total (the whole amount against every category''s spend).';
comment on column group_budget_variance.estimated_cost is 'The budget''s amount of the category for the period.';
comment on column group_budget_variance.actual_cost is
    'The scope''s effective spend of the category in the period (total: of every category).';
comment on column group_budget_variance.variance is 'actual_cost - estimated_cost: positive is over.';
comment on column group_budget_variance.variance_pct is
    'variance / estimated_cost, as a fraction (0.125 = 12.5 %); NULL when estimated_cost is 0.';
comment on column group_budget_variance.status is
    'While the period runs: over (actual >= the over threshold x the amount), warning (>= the warning threshold, or '
    'more than 110 % of the amount pro rata to elapsed), under (below 90 % of it) or on_track; once it has ended: '
    'over, under (below 90 % of the amount) or within. The rule of budget_variance''s status.';
comment on column group_budget_variance.forecast_at_completion is
    'The period''s spend at its end, pro rata: actual_cost / elapsed (the actual once the period has ended); NULL '
    'while no day of it has elapsed.';
comment on column group_budget_variance.elapsed is
    'The fraction of the period''s days behind as_of, 0 to 1 (1: the period has ended).';
comment on column group_budget_variance.as_of is
    'The data''s now: the earliest as_of of the sources carrying the period''s spend (their newest usage hour), else '
    'the newest of any source.';
comment on column group_budget_variance.budget_file is 'The budget file the row comes from.';
