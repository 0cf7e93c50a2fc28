-- The digest of what the `waste` table was last built from (one row), so a night with nothing new
-- does not rebuild it.
create table if not exists waste_inputs (
    inputs_digest varchar not null,
    built_at timestamp not null
);

-- What the table and each column hold (read into DuckDB's catalog, the Dagster column schemas and
-- docs/warehouse.md).
comment on table waste_inputs is
    'Bookkeeping of the waste asset, one row: the digest of the inputs waste was last built from (every period''s '
    'allocation inputs digest and the allocation count, the run events, budget baselines, run registry and waste '
    'settings). A run whose digest is unchanged keeps waste.';
comment on column waste_inputs.inputs_digest is 'md5 digest of those inputs.';
comment on column waste_inputs.built_at is 'When waste was built, UTC.';
