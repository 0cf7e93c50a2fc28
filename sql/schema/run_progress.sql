-- Training progress per run from its events, joined to its attributed spend and its budget.
create table if not exists run_progress (
    training_run varchar not null,
    currency varchar,
    state varchar,
    last_step bigint,
    tokens_trained hugeint,
    wall_clock_hours decimal(38, 10),
    productive_hours decimal(38, 10),
    downtime_hours decimal(38, 10),
    downtime_gpu_hours decimal(38, 10),
    step_time_seconds decimal(38, 10),
    tokens_per_gpu_second decimal(38, 10),
    gpu_hours decimal(38, 10),
    effective_mfu decimal(38, 10),
    effective_cost decimal(38, 10),
    cost_per_1e9_tokens decimal(38, 10),
    estimated_cost_per_1e9_tokens decimal(38, 10),
    as_of timestamp
);

-- warehouses created before these columns existed
alter table run_progress add column if not exists downtime_gpu_hours decimal(38, 10);
alter table run_progress add column if not exists state varchar;

-- What the table and each column hold (read into DuckDB's catalog, the Dagster column schemas and
-- docs/warehouse.md).
comment on table run_progress is
    'Training progress per run with run events, joined to its attributed spend and its budget: tokens trained, '
    'wall-clock, productive and down time, step time, throughput, effective MFU and cost per 1e9 tokens, actual '
    'against estimated. Rebuilt whole every run from run_events, budget_baselines and cost_allocations, once '
    'reconciliation passed. Money is DECIMAL(38,10) in the run''s billing currency.';
comment on column run_progress.training_run is 'The run (one row per run with events in run_events).';
comment on column run_progress.currency is
    'The billing currency of the run''s attributed spend; NULL without spend or with spend in several currencies.';
comment on column run_progress.last_step is 'The step of the run''s latest event.';
comment on column run_progress.tokens_trained is
    'The tokens of the run''s latest event that gives them (run_events.tokens), else the step of its latest event x '
    'the budget''s tokens_per_step (batch_size x sequence_length); NULL without either.';
comment on column run_progress.wall_clock_hours is
    'Hours from the first start event (or resume, when the log begins with one) to the last end event, or to '
    'as_of while the run is not ended.';
comment on column run_progress.productive_hours is
    'wall_clock_hours - downtime_hours: the hours the run was training.';
comment on column run_progress.downtime_hours is
    'Hours from each failure to the next start or resume (to the end, or as_of, when none follows).';
comment on column run_progress.downtime_gpu_hours is
    'GPU-hours held while down: each failure-to-resume interval x the GPUs of the start or resume before it.';
comment on column run_progress.step_time_seconds is
    'Seconds per optimizer step while training: over every pair of consecutive events between a start or resume '
    'and the next failure or end, the seconds / the steps advanced; NULL when no pair advanced.';
comment on column run_progress.tokens_per_gpu_second is
    'Throughput while training: tokens_per_step x the steps advanced / (the seconds x the GPUs of the latest start '
    'or resume), over the same pairs; NULL without tokens_per_step or GPUs.';
comment on column run_progress.gpu_hours is 'The compute GPU-hours attributed to the run (cost_allocations).';
comment on column run_progress.effective_mfu is
    'The budget''s gpu_hours_at_peak x tokens_trained / its training_tokens, / gpu_hours: the MFU over every '
    'GPU-hour billed for the tokens actually trained (budget_variance.actual_effective_mfu takes the planned '
    'tokens as trained); NULL without a resource model with gpu_peak_tflops or without tokens_trained.';
comment on column run_progress.effective_cost is
    'The effective cost attributed to the run over every cost category and billing period.';
comment on column run_progress.cost_per_1e9_tokens is
    'effective_cost / tokens_trained x 1e9; NULL without tokens_trained or currency.';
comment on column run_progress.estimated_cost_per_1e9_tokens is
    'The budget''s estimated cost (every category) / its training_tokens x 1e9; NULL without a resource model.';
comment on column run_progress.as_of is
    'The data''s now for the run: budget_variance.as_of (its billing sources'' newest hour with usage), never '
    'before the run''s own latest event, UTC.';
comment on column run_progress.state is
    'The run at as_of, from its latest event: training (after a start or resume), down (after a failure) or ended.';
