-- schema_version: which text of the schema the lake was last built from.

-- name: recorded
-- The digest of the schema statements the lake was built from (one row).
select max(digest) as digest from schema_version;

-- name: forget
-- The previous digest goes before the new one is recorded, in the same transaction.
delete from schema_version;

-- name: record
-- Records the digest of the schema statements just applied.
insert into schema_version (digest, applied_at) values ($digest, $applied_at);
