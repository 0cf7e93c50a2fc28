-- The digest of what each billing period's cost_allocations were computed from (the period's
-- loads, the run registry, the resource tag snapshots and the attribution settings), so a night
-- with nothing new does not recompute them.
create table if not exists allocation_inputs (
    billing_period date primary key,
    inputs_digest varchar not null,
    allocated_at timestamp not null
);

-- What the table and each column hold (read into DuckDB's catalog, the Dagster column schemas and
-- docs/warehouse.md).
comment on table allocation_inputs is
    'Bookkeeping of the cost_allocations asset, one row per billing period: the digest of the inputs its '
    'allocations were computed from (its latest good loads, the run registry, the resource tag snapshots and the '
    'attribution settings). A run whose digest is unchanged keeps the allocations.';
comment on column allocation_inputs.billing_period is 'The billing period, as the first day of its month.';
comment on column allocation_inputs.inputs_digest is 'md5 digest of those inputs.';
comment on column allocation_inputs.allocated_at is 'When the period''s allocations were computed, UTC.';
