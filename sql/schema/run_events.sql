-- Training-run events from every `run_events` source (JSON lines or MLflow), replaced whole
-- each run: start, checkpoint, failure, resume, end and metrics, with the step and GPUs at the
-- event and the step timings since the run's previous event.
create table if not exists run_events (
    source_name varchar not null,
    training_run varchar not null,
    event_time timestamp not null,   -- UTC
    event varchar not null,          -- start | checkpoint | failure | resume | end | metrics
    step bigint not null,
    gpus integer,
    config_hash varchar,
    origin varchar not null,         -- file:line, or the MLflow run it came from
    tokens bigint,                   -- tokens trained by the event, where the log counts them
    step_seconds decimal(38, 10),    -- seconds in training steps since the previous event
    data_wait_seconds decimal(38, 10), -- of them, waiting for input data
    duration_seconds decimal(38, 10)  -- on a checkpoint: the seconds writing it took
);

-- warehouses created before these columns existed
alter table run_events add column if not exists tokens bigint;
alter table run_events add column if not exists step_seconds decimal(38, 10);
alter table run_events add column if not exists data_wait_seconds decimal(38, 10);
alter table run_events add column if not exists duration_seconds decimal(38, 10);

-- What the table and each column hold (read into DuckDB's catalog, the Dagster column schemas and
-- docs/warehouse.md).
comment on table run_events is
    'Training-run events from every run_events source (JSON-lines files or MLflow runs), one row per event, '
    'replaced whole on every run: what the waste analysis reads for run ends, failures, checkpoints and duplicate '
    'configurations, and run_progress for the time, steps and tokens of training (both read the state events, '
    'never metrics events); the step timings give the data-wait share of run_utilization.';
comment on column run_events.source_name is 'The run_events source the event was read from.';
comment on column run_events.training_run is 'The training run.';
comment on column run_events.event_time is 'When the event happened, UTC.';
comment on column run_events.event is
    'start, checkpoint, failure, resume or end (the state events), or metrics: step timings only, which change '
    'nothing else about the run.';
comment on column run_events.step is 'The training step at the event, 0 or more.';
comment on column run_events.gpus is 'On start and resume: the GPUs from then on; NULL where not given.';
comment on column run_events.config_hash is
    'Hash of the training configuration, for duplicate detection; NULL where not given.';
comment on column run_events.origin is 'Where it came from: file:line, or the MLflow run.';
comment on column run_events.tokens is
    'The tokens the run has trained by the event, where the event file gives them (run_progress counts the '
    'tokens trained with them); NULL where not given.';
comment on column run_events.step_seconds is
    'Seconds spent in training steps over the window from the run''s previous event to this one (always on a '
    'metrics event); NULL where not given.';
comment on column run_events.data_wait_seconds is
    'Of step_seconds, the seconds spent waiting for input data (given with step_seconds, at most it); NULL where '
    'not given.';
comment on column run_events.duration_seconds is
    'On a checkpoint event: the seconds writing the checkpoint took, where the event file gives them (the write '
    'time w of the checkpoint_interval recommendation); NULL where not given.';
