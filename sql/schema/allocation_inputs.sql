-- The digest of what each billing period's cost_allocations were computed from (the period's
-- loads, the run registry, the resource tag snapshots and the attribution settings), so a night
-- with nothing new does not recompute them.
create table if not exists allocation_inputs (
    billing_period date primary key,
    inputs_digest varchar not null,
    allocated_at timestamp not null
);
