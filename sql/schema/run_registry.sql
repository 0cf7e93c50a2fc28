-- The run registry (attribution.runs): experiment, dataset version and owner per run.
create table if not exists run_registry (
    training_run varchar primary key,
    experiment varchar,
    dataset_version varchar,
    owner varchar,
    window_start timestamp,
    window_end timestamp,
    resources varchar[],
    weight decimal(38, 10)
);
