-- The inputs digest of each step's last build, per partition, so a night with nothing new keeps
-- what the step built: cost_allocations per billing period (partition key `YYYY-MM-01`), the
-- steps built whole (partition key ''): waste, the marts and the inputs replaced whole. Each step
-- computes its own digest (sql/ops/*_inputs.sql, pipelines/warehouse/step_inputs.py).
create table if not exists step_inputs (
    step varchar not null,
    partition_key varchar not null,
    inputs_digest varchar not null,
    recorded_at timestamp not null
);

comment on table step_inputs is
    'Bookkeeping: the inputs digest of each step''s last build, per partition, so a night with '
    'nothing new keeps what the step built.';
comment on column step_inputs.step is
    'The step: the table it builds, e.g. cost_allocations, waste, budget_variance, run_registry.';
comment on column step_inputs.partition_key is
    'The partition built: the billing period as YYYY-MM-01 for cost_allocations, empty for a step built whole.';
comment on column step_inputs.inputs_digest is 'Digest (md5 or sha256) of the inputs the build was computed from.';
comment on column step_inputs.recorded_at is 'When the build was recorded, UTC.';

-- A check's step records what it concluded, shown again on a night its inputs are unchanged and it
-- does not run (reconciliation, untagged_share); warehouses of earlier versions get the column.
alter table step_inputs add column if not exists outcome varchar;
comment on column step_inputs.outcome is
    'What a check concluded from those inputs (JSON), shown again while they are unchanged; NULL for a build.';

-- step_inputs replaced the two digest tables of earlier warehouses; the first run after the
-- upgrade rebuilds the allocations and waste once.
drop table if exists allocation_inputs;
drop table if exists waste_inputs;
