"""The demo's story: three training runs, the spend nobody tagged, and what the team planned
(the run registry, budgets) and logged (run events)."""
