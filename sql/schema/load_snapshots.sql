-- The lake snapshot each load committed, appended right after the commit (a lake numbers a snapshot
-- only once it is committed): `--at <snapshot_id>` reads the warehouse as that load left it.
create table if not exists load_snapshots (
    load_id varchar not null,
    snapshot_id bigint not null,
    committed_at timestamp not null
);

comment on table load_snapshots is
    'The lake snapshot that committed each load of loads (status loaded), appended once the commit is done: '
    '`runledger query --at <snapshot_id>` reads the warehouse as that load left it.';
comment on column load_snapshots.load_id is 'The load (loads.load_id).';
comment on column load_snapshots.snapshot_id is 'The lake snapshot its commit made (lake.snapshots()).';
comment on column load_snapshots.committed_at is 'When the commit was recorded, UTC.';
