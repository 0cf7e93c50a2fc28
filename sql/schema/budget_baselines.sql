-- Pre-training estimate per run and cost category, from budgets/<run>.yaml.
create table if not exists budget_baselines (
    training_run varchar not null,
    cost_category varchar not null,
    currency varchar not null,
    estimated_cost decimal(38, 10) not null,
    estimated_gpu_hours decimal(38, 10),
    estimated_rate decimal(38, 10),
    -- compute rows with a resource model: the planned tokens, and the GPU-hours its 6 N D FLOPs
    -- take at the GPU's full peak (MFU 1, no overhead; NULL without gpu_peak_tflops)
    training_tokens decimal(38, 10),
    gpu_hours_at_peak decimal(38, 10),
    -- storage rows of budgets with `storage`: how many checkpoints the estimate keeps
    checkpoints_retained integer,
    thresholds struct(warning decimal(38, 10), "over" decimal(38, 10)) not null,
    "window" struct("start" date, "end" date) not null,
    budget_file varchar not null,
    primary key (training_run, cost_category)
);

-- warehouses created before these columns existed
alter table budget_baselines add column if not exists training_tokens decimal(38, 10);
alter table budget_baselines add column if not exists gpu_hours_at_peak decimal(38, 10);
alter table budget_baselines add column if not exists checkpoints_retained integer;
