-- Which text of the schema (sql/schema/, the macros, the views) the lake was last built from: a
-- writer whose code has the same text changes nothing at connect.
create table if not exists schema_version (
    digest varchar not null,
    applied_at timestamp not null
);

comment on table schema_version is
    'Bookkeeping: the digest of the schema statements the lake was last built from, and when.';
comment on column schema_version.digest is 'sha256 of the text of every statement that creates the schema.';
comment on column schema_version.applied_at is 'When that schema was applied, UTC.';
