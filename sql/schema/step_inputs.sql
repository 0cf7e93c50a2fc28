-- The inputs digest of each step's last build, per partition, so a night with nothing new keeps
-- what the step built: cost_allocations per billing period (partition key `YYYY-MM-01`) and waste
-- (built whole: partition key ''). Each step computes its own digest (sql/ops/*_inputs.sql).
create table if not exists step_inputs (
    step varchar not null,
    partition_key varchar not null,
    inputs_digest varchar not null,
    recorded_at timestamp not null,
    primary key (step, partition_key)
);

-- step_inputs replaced the two digest tables of earlier warehouses; the first run after the
-- upgrade rebuilds the allocations and waste once.
drop table if exists allocation_inputs;
drop table if exists waste_inputs;
