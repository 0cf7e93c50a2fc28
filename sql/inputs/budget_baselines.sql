-- The budget baselines table, replaced whole from the budget files.

-- name: delete
-- Empties budget_baselines before the budgets are loaded again (pipelines.budgets.tables).
delete from budget_baselines;

-- name: insert
-- One budget_baselines row (pipelines.budgets.model.baseline_rows); every value is bound by name.
insert into budget_baselines (
    training_run,
    cost_category,
    cost_behavior,
    currency,
    estimated_cost,
    estimated_gpu_hours,
    estimated_rate,
    training_tokens,
    gpu_hours_at_peak,
    tokens_per_step,
    estimated_wall_clock_hours,
    checkpoints_retained,
    checkpoint_write_seconds,
    thresholds,
    gpu_hours_thresholds,
    wall_clock_thresholds,
    storage_thresholds,
    daily_spend_anomaly_thresholds,
    low_gpu_utilization_thresholds,
    data_loading_share_thresholds,
    "window",
    budget_file
)
values (
    $training_run,
    $cost_category,
    $cost_behavior,
    $currency,
    cast($estimated_cost as decimal(38, 10)),
    cast($estimated_gpu_hours as decimal(38, 10)),
    cast($estimated_rate as decimal(38, 10)),
    cast($training_tokens as decimal(38, 10)),
    cast($gpu_hours_at_peak as decimal(38, 10)),
    cast($tokens_per_step as bigint),
    cast($estimated_wall_clock_hours as decimal(38, 10)),
    cast($checkpoints_retained as integer),
    cast($checkpoint_write_seconds as decimal(38, 10)),
    cast($thresholds as struct(warning decimal(38, 10), "over" decimal(38, 10))),
    cast($gpu_hours_thresholds as struct(warning decimal(38, 10), "over" decimal(38, 10))),
    cast($wall_clock_thresholds as struct(warning decimal(38, 10), "over" decimal(38, 10))),
    cast($storage_thresholds as struct(warning decimal(38, 10), "over" decimal(38, 10))),
    cast($daily_spend_anomaly_thresholds as struct(warning decimal(38, 10), "over" decimal(38, 10))),
    cast($low_gpu_utilization_thresholds as struct(warning decimal(38, 10), "over" decimal(38, 10), hours integer)),
    cast($data_loading_share_thresholds as struct(warning decimal(38, 10), "over" decimal(38, 10), hours integer)),
    cast($window as struct("start" date, "end" date)),
    $budget_file
);

-- name: count
-- Rows of budget_baselines.
select count(*) from budget_baselines;
