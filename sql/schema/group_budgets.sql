-- Each group budget's amounts, from the budget files with `scope:`.
create table if not exists group_budgets (
    scope_kind varchar not null,
    scope varchar not null,
    -- monthly, or window
    period_kind varchar not null,
    "window" struct("start" date, "end" date),
    from_period date,
    cost_category varchar not null,
    currency varchar not null,
    amount decimal(38, 10) not null,
    thresholds struct(warning decimal(38, 10), "over" decimal(38, 10)) not null,
    budget_file varchar not null
);

-- What the table and each column hold (read into DuckDB's catalog, the Dagster column schemas and
-- docs/warehouse.md).
comment on table group_budgets is
    'Each group budget (a budget file with scope: in place of training_run:): one row per cost category its amount '
    'names, or one row `total` for an amount given as one number; replaced whole from the budget folder. Money is '
    'DECIMAL(38,10) in the budget''s currency.';
comment on column group_budgets.scope_kind is
    'The dimension the budget scopes: experiment, owner, dataset_version, cluster or a custom dimension of '
    'attribution.dimensions.';
comment on column group_budgets.scope is 'The dimension''s value whose spend the budget counts.';
comment on column group_budgets.period_kind is
    'monthly (the amount is each billing period''s) or window (the amount is the window''s).';
comment on column group_budgets."window" is 'A window budget''s days, [start, end) in UTC; NULL for monthly.';
comment on column group_budgets.from_period is
    'A monthly budget''s first billing period (its `from:`, first day); NULL: every period with spend.';
comment on column group_budgets.cost_category is
    'The category the amount is of (as x_CostCategory), or total for an amount given as one number.';
comment on column group_budgets.currency is
    'The budget''s currency: the scope''s spend must be billed in it (RunLedger does not convert currencies).';
comment on column group_budgets.amount is 'The amount of the category per period, in currency.';
comment on column group_budgets.thresholds is
    'The alert thresholds as fractions of the period''s total amount, warning and over (0 < warning <= over); the '
    'same on every row of the budget.';
comment on column group_budgets.budget_file is 'The budget file the row was read from.';
