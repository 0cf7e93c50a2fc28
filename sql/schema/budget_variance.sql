-- Actual (effective) against estimate per run and cost category, plus one 'total' row per run.
create table if not exists budget_variance (
    training_run varchar not null,
    cost_category varchar not null,
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
    primary key (training_run, cost_category)
);

-- warehouses created before these columns existed
alter table budget_variance add column if not exists estimated_effective_mfu decimal(38, 10);
alter table budget_variance add column if not exists actual_effective_mfu decimal(38, 10);
alter table budget_variance add column if not exists actual_tokens_per_gpu_second decimal(38, 10);
