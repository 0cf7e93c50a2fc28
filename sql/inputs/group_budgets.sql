-- The group budgets table, replaced whole from the budget files with `scope:`.

-- name: delete
-- Empties group_budgets before the group budgets are loaded again (pipelines.plans.tables).
delete from group_budgets;

-- name: insert
-- One group_budgets row (pipelines.plans.tables.group_budget_rows); every value is bound by name.
insert into group_budgets (
    scope_kind, scope, period_kind, "window", from_period, cost_category, currency, amount, thresholds, budget_file
)
values (
    $scope_kind,
    $scope,
    $period_kind,
    cast($window as struct("start" date, "end" date)),
    cast($from_period as date),
    $cost_category,
    $currency,
    cast($amount as decimal(38, 10)),
    cast($thresholds as struct(warning decimal(38, 10), "over" decimal(38, 10))),
    $budget_file
);

-- name: count
-- Rows of group_budgets.
select count(*) from group_budgets;
