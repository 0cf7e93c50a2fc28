-- The inputs digest of each step's last build, per partition, so a night with nothing new keeps
-- what the step built: cost_allocations per billing period (partition key `YYYY-MM-01`), and waste,
-- run_costs and unattributed_costs (built whole: partition key ''). Each step computes its own
-- digest (sql/ops/*_inputs.sql).
create table if not exists step_inputs (
    step varchar not null,
    partition_key varchar not null,
    inputs_digest varchar not null,
    recorded_at timestamp not null
);

comment on table step_inputs is
    'Bookkeeping: the inputs digest of each step''s last build, per partition, so a night with '
    'nothing new keeps what the step built.';
comment on column step_inputs.step is 'The step: cost_allocations, waste, run_costs or unattributed_costs.';
comment on column step_inputs.partition_key is
    'The partition built: the billing period as YYYY-MM-01 for cost_allocations, empty for the steps built whole.';
comment on column step_inputs.inputs_digest is 'md5 digest of the inputs the build was computed from.';
comment on column step_inputs.recorded_at is 'When the build was recorded, UTC.';

-- step_inputs replaced the two digest tables of earlier warehouses; the first run after the
-- upgrade rebuilds the allocations and waste once.
drop table if exists allocation_inputs;
drop table if exists waste_inputs;
