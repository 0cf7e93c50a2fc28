-- Each budgeted run's variance split into its causes, every level summing exactly to its parent.
create table if not exists variance_causes (
    training_run varchar not null,
    parent varchar not null,         -- total | rate | usage
    cause varchar not null,
    pricing varchar,                 -- the pricing type of a pricing_mix or price row
    currency varchar,
    amount decimal(38, 10) not null,
    gpu_hours decimal(38, 10),
    evidence varchar
);

-- What the table and each column hold (read into DuckDB's catalog, the Dagster column schemas and
-- docs/warehouse.md).
comment on table variance_causes is
    'Why each budgeted run is over or under: its variance (budget_variance) split into causes, each level '
    'summing exactly to its parent. total = rate + usage + each other category''s variance (compute as a category '
    'when its budget has no resource model); rate = pricing_mix (one row per pricing type off the plan) + price '
    '(the planned pricing type) + other_compute (compute spend without GPU-hours); usage = idle_after_run + '
    'recompute_after_failure + restart_downtime + scope + throughput (what is left). Money is DECIMAL(38,10) in '
    'the budget''s currency. Rebuilt whole every run from budget_variance, budget_baselines, waste, run_progress '
    'and run_pricing.';
comment on column variance_causes.training_run is 'The budgeted run.';
comment on column variance_causes.parent is
    'What the row is part of: total (the run''s variance), rate or usage (the compute rate and usage variances).';
comment on column variance_causes.cause is
    'Under total: rate, usage or a cost category. Under rate: pricing_mix, price or other_compute. Under usage: '
    'idle_after_run, recompute_after_failure, restart_downtime, scope or throughput.';
comment on column variance_causes.pricing is
    'pricing_mix and price rows: the pricing type (as run_pricing.pricing); NULL on other rows and on a price row '
    'of a run without GPU-hours.';
comment on column variance_causes.currency is 'The budget''s currency.';
comment on column variance_causes.amount is
    'What the cause adds to the cost (negative: what it saves). The rows of a run with the same parent sum '
    'exactly to the parent: total to budget_variance.variance of the total row, rate and usage to its compute '
    'row''s rate_variance and usage_variance. Usage causes are their GPU-hours x the estimated rate, rounded to '
    'the 10th decimal, except throughput, the remainder; price is the remainder of rate.';
comment on column variance_causes.gpu_hours is
    'GPU-hours of the cause: actual - planned for usage and each usage cause, those of the pricing type for '
    'pricing_mix and price, the actual ones for rate and compute; NULL where GPU-hours do not apply, and for scope '
    'while the run''s tokens trained are unknown.';
comment on column variance_causes.evidence is
    'What the amount rests on, in one line: rates, GPU-hours, failures, tokens, throughput or the estimate.';
