"""RunLedger pipelines: the Dagster code location, normalization, attribution, budgets, reports."""
