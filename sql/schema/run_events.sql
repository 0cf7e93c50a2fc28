-- Training-run events from every `run_events` source (JSON lines or MLflow), replaced whole
-- each run: start, checkpoint, failure, resume and end, with the step and GPUs at the event.
create table if not exists run_events (
    source_name varchar not null,
    training_run varchar not null,
    event_time timestamp not null,   -- UTC
    event varchar not null,          -- start | checkpoint | failure | resume | end
    step bigint not null,
    gpus integer,
    config_hash varchar,
    origin varchar not null,         -- file:line, or the MLflow run it came from
    tokens bigint                    -- tokens trained by the event, where the log counts them
);

-- warehouses created before this column existed
alter table run_events add column if not exists tokens bigint;

-- What the table and each column hold (read into DuckDB's catalog, the Dagster column schemas and
-- docs/warehouse.md).
comment on table run_events is
    'Training-run events from every run_events source (JSON-lines files or MLflow runs), one row per event, '
    'replaced whole on every run: what the waste analysis reads for run ends, failures, checkpoints and duplicate '
    'configurations, and run_progress for the time, steps and tokens of training.';
comment on column run_events.source_name is 'The run_events source the event was read from.';
comment on column run_events.training_run is 'The training run.';
comment on column run_events.event_time is 'When the event happened, UTC.';
comment on column run_events.event is 'start, checkpoint, failure, resume or end.';
comment on column run_events.step is 'The training step at the event, 0 or more.';
comment on column run_events.gpus is 'On start and resume: the GPUs from then on; NULL where not given.';
comment on column run_events.config_hash is
    'Hash of the training configuration, for duplicate detection; NULL where not given.';
comment on column run_events.origin is 'Where it came from: file:line, or the MLflow run.';
comment on column run_events.tokens is
    'The tokens the run has trained by the event, where the event file gives them (run_progress counts the '
    'tokens trained with them); NULL where not given.';
