-- What to do next: each run's recommendations with the saving each would have brought, and the
-- ones left out for missing inputs, rebuilt whole every run from the waste, the run progress and
-- pricing, the run events, the budgets and the checkpoint storage charged after each run's end.
create table if not exists recommendations (
    training_run varchar,            -- NULL for a cluster's
    cluster varchar,
    kind varchar not null,           -- checkpoint_interval | stop_idle_after_run | commit_on_demand_gpus
                                     -- | cold_checkpoints | colocate_data | low_gpu_utilization
    estimated_saving decimal(38, 10) not null,
    currency varchar,
    evidence varchar not null,
    action varchar not null
);

create table if not exists recommendations_left_out (
    training_run varchar not null,
    kind varchar not null,
    reason varchar not null
);

-- What the table and each column hold (read into DuckDB's catalog, the Dagster column schemas and
-- docs/warehouse.md).
comment on table recommendations is
    'What to do next: one row per recommendation, with the saving it would have brought (per run for a run''s; '
    'per month for cold_checkpoints, storage that keeps costing, and for a cluster''s), the evidence it rests on '
    'and one action a person can take. Kinds: checkpoint_interval (the Young/Daly interval against the one used), '
    'stop_idle_after_run, commit_on_demand_gpus, cold_checkpoints, colocate_data and low_gpu_utilization. An '
    'analysis: it changes no other table. Only savings above 0; a recommendation whose inputs are missing is in '
    'recommendations_left_out instead. Money is DECIMAL(38,10). Rebuilt whole every run.';
comment on column recommendations.training_run is 'The run the recommendation is for; NULL for a cluster''s.';
comment on column recommendations.cluster is 'The cluster a cluster''s recommendation is for; NULL for a run''s.';
comment on column recommendations.kind is
    'checkpoint_interval, stop_idle_after_run, commit_on_demand_gpus, cold_checkpoints, colocate_data or '
    'low_gpu_utilization (docs/semantics.md "Recommendations" gives each formula).';
comment on column recommendations.estimated_saving is
    'What following the action would have saved, > 0: over the run, or per 30-day month for cold_checkpoints.';
comment on column recommendations.currency is 'The billing currency of the saving.';
comment on column recommendations.evidence is 'The figures the saving is computed from, in one line.';
comment on column recommendations.action is 'What to do, in one sentence.';

comment on table recommendations_left_out is
    'The recommendations left out of recommendations for a run because an input is missing (no failures, no '
    'checkpoint write time, no committed rate, no listed price ratio, no telemetry ...): one row per run and kind, '
    'saying which input and how to provide it. Rebuilt with recommendations.';
comment on column recommendations_left_out.training_run is 'The run.';
comment on column recommendations_left_out.kind is 'The kind of recommendation left out.';
comment on column recommendations_left_out.reason is 'Which input is missing, and how to provide it.';
