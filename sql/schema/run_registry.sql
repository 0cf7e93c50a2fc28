-- The run registry (attribution.runs): experiment, dataset version and owner per run.
create table if not exists run_registry (
    training_run varchar not null,
    experiment varchar,
    dataset_version varchar,
    owner varchar,
    window_start timestamp,
    window_end timestamp,
    resources varchar[],
    weight decimal(38, 10)
);

-- What the table and each column hold (read into DuckDB's catalog, the Dagster column schemas and
-- docs/warehouse.md).
comment on table run_registry is
    'The run registry (attribution.runs): one row per registered training run, replaced whole from the runs file. '
    'Names the experiment, dataset version and owner of a run and the resources attributed to it by glob within '
    'its window.';
comment on column run_registry.training_run is 'The training run''s id.';
comment on column run_registry.experiment is 'Its experiment; NULL when not registered.';
comment on column run_registry.dataset_version is 'Its dataset version; NULL when not registered.';
comment on column run_registry.owner is 'Its owner; NULL when not registered.';
comment on column run_registry.window_start is 'Start of its window [start, end), UTC; NULL for no lower bound.';
comment on column run_registry.window_end is 'End of its window (exclusive), UTC; NULL for no upper bound.';
comment on column run_registry.resources is
    'Globs on focus_line_items.ResourceId (case-sensitive) whose lines are attributed to the run within its window.';
comment on column run_registry.weight is
    'Its weight when several runs match one line: the line is split by weight x overlap with each window.';
