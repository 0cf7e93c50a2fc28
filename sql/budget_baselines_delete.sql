-- Empties budget_baselines before the budgets are loaded again (pipelines.budgets.tables).
delete from budget_baselines
