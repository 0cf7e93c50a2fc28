-- Pre-training estimate per run and cost category, from budgets/<run>.yaml.
create table if not exists budget_baselines (
    training_run varchar not null,
    cost_category varchar not null,
    -- fixed (a `fixed:` amount) or elastic (derived from the run's size)
    cost_behavior varchar,
    currency varchar not null,
    estimated_cost decimal(38, 10) not null,
    estimated_gpu_hours decimal(38, 10),
    estimated_rate decimal(38, 10),
    -- compute rows with a resource model: the planned tokens, and the GPU-hours its training FLOPs
    -- take at the GPU's full peak (MFU 1, no overhead; NULL without gpu_peak_tflops)
    training_tokens decimal(38, 10),
    gpu_hours_at_peak decimal(38, 10),
    -- compute rows of a model with batch_size and sequence_length: tokens per optimizer step
    tokens_per_step bigint,
    -- compute rows with a resource model: the planned wall-clock (GPU-hours / GPUs)
    estimated_wall_clock_hours decimal(38, 10),
    -- storage rows of budgets with `storage`: how many checkpoints the estimate keeps
    checkpoints_retained integer,
    -- the budget's checkpoint_write_seconds, on every row of the run
    checkpoint_write_seconds decimal(38, 10),
    thresholds struct(warning decimal(38, 10), "over" decimal(38, 10)) not null,
    -- the levels of the thresholds besides cost, resolved from the budget and runledger.yaml
    gpu_hours_thresholds struct(warning decimal(38, 10), "over" decimal(38, 10)),
    wall_clock_thresholds struct(warning decimal(38, 10), "over" decimal(38, 10)),
    storage_thresholds struct(warning decimal(38, 10), "over" decimal(38, 10)),
    daily_spend_anomaly_thresholds struct(warning decimal(38, 10), "over" decimal(38, 10)),
    low_gpu_utilization_thresholds struct(warning decimal(38, 10), "over" decimal(38, 10), hours integer),
    data_loading_share_thresholds struct(warning decimal(38, 10), "over" decimal(38, 10), hours integer),
    "window" struct("start" date, "end" date) not null,
    budget_file varchar not null
);

-- warehouses created before these columns existed
alter table budget_baselines add column if not exists training_tokens decimal(38, 10);
alter table budget_baselines add column if not exists gpu_hours_at_peak decimal(38, 10);
alter table budget_baselines add column if not exists checkpoints_retained integer;
alter table budget_baselines add column if not exists tokens_per_step bigint;
alter table budget_baselines add column if not exists cost_behavior varchar;
alter table budget_baselines add column if not exists estimated_wall_clock_hours decimal(38, 10);
alter table budget_baselines add column if not exists checkpoint_write_seconds decimal(38, 10);
alter table budget_baselines add column if not exists gpu_hours_thresholds struct(
    warning decimal(38, 10), "over" decimal(38, 10)
);
alter table budget_baselines add column if not exists wall_clock_thresholds struct(
    warning decimal(38, 10), "over" decimal(38, 10)
);
alter table budget_baselines add column if not exists storage_thresholds struct(
    warning decimal(38, 10), "over" decimal(38, 10)
);
alter table budget_baselines add column if not exists daily_spend_anomaly_thresholds struct(
    warning decimal(38, 10), "over" decimal(38, 10)
);
alter table budget_baselines add column if not exists low_gpu_utilization_thresholds struct(
    warning decimal(38, 10), "over" decimal(38, 10), hours integer
);
alter table budget_baselines add column if not exists data_loading_share_thresholds struct(
    warning decimal(38, 10), "over" decimal(38, 10), hours integer
);

-- What the table and each column hold (read into DuckDB's catalog, the Dagster column schemas and
-- docs/warehouse.md).
comment on table budget_baselines is
    'Each budgeted run''s pre-training estimate: one row per (training run, cost category) its budget estimates, '
    'replaced whole from budgets/<run>.yaml. Compute comes from the resource model: GPU-hours of its training FLOPs at '
    'the planned MFU or throughput, plus overhead, at gpu_hour_price. Money is DECIMAL(38,10) in the budget''s '
    'currency.';
comment on column budget_baselines.training_run is 'The budgeted run (the budget''s training_run).';
comment on column budget_baselines.cost_category is
    'The category estimated (as x_CostCategory): compute and storage from the model, network from egress, the '
    'others from fixed amounts.';
comment on column budget_baselines.cost_behavior is
    'fixed for a fixed: line of the budget (an amount, whatever the run''s size: labor, data_labeling, tooling, '
    '...), elastic for the lines derived from the run''s size: compute (model), storage and network.';
comment on column budget_baselines.currency is
    'The budget''s currency: the run''s spend must be billed in it (RunLedger does not convert currencies).';
comment on column budget_baselines.estimated_cost is 'The estimate of the category, in currency.';
comment on column budget_baselines.estimated_gpu_hours is
    'Compute row of a budget with a model: the planned GPU-hours, overhead included; NULL on other rows.';
comment on column budget_baselines.estimated_rate is
    'Compute row of a budget with a model: its gpu_hour_price in currency per GPU-hour (estimated_cost = '
    'round(estimated_gpu_hours x estimated_rate, 10)); NULL on other rows.';
comment on column budget_baselines.training_tokens is
    'Compute row of a budget with a model: the planned training tokens; NULL on other rows.';
comment on column budget_baselines.gpu_hours_at_peak is
    'Compute row of a budget with a model: the GPU-hours its training FLOPs (FLOPs per token x tokens, 6 N D for '
    'pre-training) take at the GPU''s full peak (MFU 1, no overhead); NULL on other rows and without '
    'gpu_peak_tflops.';
comment on column budget_baselines.tokens_per_step is
    'Compute row of a budget with a model giving batch_size and sequence_length: batch_size x sequence_length, the '
    'tokens of one optimizer step (run_progress counts the tokens trained with it); NULL otherwise.';
comment on column budget_baselines.estimated_wall_clock_hours is
    'Compute row of a budget with a model: the planned wall-clock hours, estimated_gpu_hours / gpus (the planned '
    'burn of the report, the linear forecast of a run without events and the wall_clock alerts run over it); '
    'NULL on other rows.';
comment on column budget_baselines.checkpoints_retained is
    'Storage row of a budget with storage: how many checkpoints the estimate keeps (the checkpoint_retention '
    'waste counts those beyond it); NULL on other rows.';
comment on column budget_baselines.checkpoint_write_seconds is
    'The budget''s checkpoint_write_seconds: the seconds writing one checkpoint takes, the write time of the '
    'checkpoint_interval recommendation when the run''s checkpoint events give none; the same on every row of the '
    'run, NULL when the budget gives none.';
comment on column budget_baselines.thresholds is
    'The alert thresholds as fractions of the estimate, warning and over (0 < warning <= over); the same on every '
    'row of the run.';
comment on column budget_baselines.gpu_hours_thresholds is
    'The gpu_hours alert levels, warning and over, as fractions of estimated_gpu_hours: the budget''s '
    'thresholds.gpu_hours, else runledger.yaml''s, else the cost thresholds; the same on every row of the run.';
comment on column budget_baselines.wall_clock_thresholds is
    'The wall_clock alert levels as fractions of estimated_wall_clock_hours, resolved as gpu_hours_thresholds.';
comment on column budget_baselines.storage_thresholds is
    'The storage alert levels as fractions of the storage estimate, resolved as gpu_hours_thresholds.';
comment on column budget_baselines.daily_spend_anomaly_thresholds is
    'The daily_spend_anomaly alert levels as multiples of the run''s trailing median daily spend: the '
    'budget''s thresholds.daily_spend_anomaly, else runledger.yaml''s (default 3 and 5).';
comment on column budget_baselines.low_gpu_utilization_thresholds is
    'The low_gpu_utilization alert levels: hourly mean GPU utilization (0 to 1) below warning, below over (the '
    'lower), for `hours` consecutive hours; the budget''s thresholds.low_gpu_utilization, else runledger.yaml''s '
    '(default 0.5, 0.3 and 2).';
comment on column budget_baselines.data_loading_share_thresholds is
    'The data_loading_share alert levels: hourly share of step time waiting for data above warning, above over, '
    'for `hours` consecutive hours; the budget''s thresholds.data_loading_share, else runledger.yaml''s (default '
    '0.15, 0.30 and 2).';
comment on column budget_baselines."window" is
    'The run''s planned window, start and end dates: [start, end) in UTC; the same on every row of the run.';
comment on column budget_baselines.budget_file is 'The budget file the row was read from.';
