-- The digest of what the `waste` table was last built from (one row), so a night with nothing new
-- does not rebuild it.
create table if not exists waste_inputs (
    inputs_digest varchar not null,
    built_at timestamp not null
);
