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
    origin varchar not null          -- file:line, or the MLflow run it came from
);
