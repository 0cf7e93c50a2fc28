"""The plan before a run: budget files, the resource model that turns them into an estimate, and
`budget_baselines`, an input of the night that progress, waste and budgets read."""
