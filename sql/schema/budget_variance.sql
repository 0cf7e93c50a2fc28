-- Actual (effective) against estimate per run and cost category, plus one 'total' row per run.
create table if not exists budget_variance (
    training_run varchar not null,
    cost_category varchar not null,
    -- fixed or elastic, as the category's baseline line; NULL on the total row
    cost_behavior varchar,
    currency varchar,
    estimated_cost decimal(38, 10),
    actual_cost decimal(38, 10),
    variance decimal(38, 10),
    variance_pct decimal(38, 10),
    status varchar,
    forecast_at_completion decimal(38, 10),
    estimated_gpu_hours decimal(38, 10),
    actual_gpu_hours decimal(38, 10),
    estimated_rate decimal(38, 10),
    actual_rate decimal(38, 10),
    rate_variance decimal(38, 10),
    usage_variance decimal(38, 10),
    -- compute with a resource model: MFU over every GPU-hour (overhead included), estimated and
    -- as implied by the actual GPU-hours, and the actual tokens per second per GPU
    estimated_effective_mfu decimal(38, 10),
    actual_effective_mfu decimal(38, 10),
    actual_tokens_per_gpu_second decimal(38, 10),
    as_of timestamp,
    forecast_method varchar,
    as_of_by_source map(varchar, timestamp)
);

-- warehouses created before these columns existed
alter table budget_variance add column if not exists estimated_effective_mfu decimal(38, 10);
alter table budget_variance add column if not exists actual_effective_mfu decimal(38, 10);
alter table budget_variance add column if not exists actual_tokens_per_gpu_second decimal(38, 10);
alter table budget_variance add column if not exists cost_behavior varchar;
alter table budget_variance add column if not exists forecast_method varchar;
alter table budget_variance add column if not exists as_of_by_source map(varchar, timestamp);

-- What the table and each column hold (read into DuckDB's catalog, the Dagster column schemas and
-- docs/warehouse.md).
comment on table budget_variance is
    'Each budgeted run''s actual spend against its estimate: one row per cost category of its baseline or its '
    'allocations (all billing periods), plus one row cost_category = total. Actual is the effective cost '
    'attributed to the run; runs without a budget are left out. Money is DECIMAL(38,10) in the budget''s currency. '
    'Rebuilt whole every run, once reconciliation passed.';
comment on column budget_variance.training_run is 'The budgeted run.';
comment on column budget_variance.cost_category is 'The cost category, or total for the run as a whole.';
comment on column budget_variance.cost_behavior is
    'fixed or elastic: the cost_behavior of the category''s budget_baselines line; for a category the budget does '
    'not estimate, elastic for compute, storage and network and fixed for the others; NULL on the total row. The '
    'fixed and the elastic rows of a run sum to its total row.';
comment on column budget_variance.currency is 'The budget''s currency.';
comment on column budget_variance.estimated_cost is 'The estimate; 0 for a category the budget does not estimate.';
comment on column budget_variance.actual_cost is
    'Effective cost attributed to the run in the category over all billing periods; 0 where none.';
comment on column budget_variance.variance is 'actual_cost - estimated_cost: positive means over the estimate.';
comment on column budget_variance.variance_pct is
    'variance / estimated_cost as a fraction (0.201 is 20.1 % over); NULL when estimated_cost is 0.';
comment on column budget_variance.status is
    'over (actual >= the over threshold x estimate, or spend without an estimate). Once the run ended: under '
    '(below 90 % of the estimate) or within. While it trains: warning (>= the warning threshold x estimate, or '
    'more than 10 % above the estimate pro rata to its progress), under (more than 10 % below it) or on_track. '
    'A fixed amount''s pro rata is its whole estimate.';
comment on column budget_variance.forecast_at_completion is
    'What the run will have spent when it ends, by forecast_method: the actual once ended; a fixed amount at '
    'least its estimate; else actual_cost / the share of the run done (tokens trained / planned tokens, or the '
    'wall-clock since its first usage / the planned wall-clock); the total is the sum of its categories. NULL '
    'while nothing of the run is done.';
comment on column budget_variance.forecast_method is
    'How forecast_at_completion was made: progress (from run_progress: the remaining planned tokens at the '
    'GPU-hours per token and the cost per GPU-hour so far), linear (a run without events: its wall-clock since '
    'its first usage against the planned wall-clock, or the budget window without a model) or actual (ended).';
comment on column budget_variance.as_of_by_source is
    'The as_of of each billing source carrying the run''s spend: each source''s newest hour with usage, UTC.';
comment on column budget_variance.estimated_gpu_hours is
    'Compute row with a resource model: the planned GPU-hours; NULL otherwise.';
comment on column budget_variance.actual_gpu_hours is
    'Compute row: the GPU-hours attributed to the run; NULL on other rows.';
comment on column budget_variance.estimated_rate is
    'Compute row with a resource model: the planned price per GPU-hour; NULL otherwise.';
comment on column budget_variance.actual_rate is
    'Compute row: actual_cost / actual_gpu_hours; NULL without GPU-hours and on other rows.';
comment on column budget_variance.rate_variance is
    'Compute row with a resource model: variance - usage_variance, so the two add up to the variance exactly; it '
    'equals (actual_rate - estimated_rate) x actual_gpu_hours up to the 10th decimal. NULL otherwise.';
comment on column budget_variance.usage_variance is
    'Compute row with a resource model: round((actual_gpu_hours - estimated_gpu_hours) x estimated_rate, 10); '
    'NULL otherwise.';
comment on column budget_variance.estimated_effective_mfu is
    'Compute row with gpu_hours_at_peak: gpu_hours_at_peak / estimated_gpu_hours, the planned MFU over every '
    'GPU-hour (mfu / (1 + overhead)); NULL otherwise.';
comment on column budget_variance.actual_effective_mfu is
    'Compute row with gpu_hours_at_peak, once the budget window has ended: gpu_hours_at_peak / actual_gpu_hours '
    '(the planned tokens taken as trained); NULL before and otherwise.';
comment on column budget_variance.actual_tokens_per_gpu_second is
    'Compute row with a resource model, once the budget window has ended: training_tokens / (actual_gpu_hours x '
    '3600); NULL before and otherwise.';
comment on column budget_variance.as_of is
    'The data''s now for the run (not the wall clock): the earliest as_of of the billing sources carrying its '
    'spend, a source''s as_of being the latest end of its usage lines lasting at most a day (never the end of a '
    'month-long fee), else the latest of any source; NULL while no source has usage.';
