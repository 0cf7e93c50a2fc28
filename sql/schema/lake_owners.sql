-- Which configuration (runledger.yaml) writes the lake, and which loaded each billing source: a
-- writer of another configuration is refused (pipelines/warehouse/owners.py).
create table if not exists lake_owners (
    source_name varchar,                -- NULL: the lake itself
    configuration varchar not null,     -- the owning runledger.yaml (relative to an embedded lake's folder)
    claimed_at timestamp not null
);

comment on table lake_owners is
    'Bookkeeping: the configuration (runledger.yaml) that owns the lake, and the one that loads each billing source. '
    'A writer of another configuration is refused, since two configurations would replace each other''s sources, '
    'run registry and budgets, unless it takes the lake over (runledger run --take-over-lake).';
comment on column lake_owners.source_name is
    'The billing source (sources[].name) the row is about; NULL for the row of the lake itself.';
comment on column lake_owners.configuration is
    'The owning runledger.yaml: for an embedded lake its path relative to the lake''s folder (it moves with the '
    'project), else its absolute path.';
comment on column lake_owners.claimed_at is 'When that configuration first wrote the lake or the source, UTC.';
