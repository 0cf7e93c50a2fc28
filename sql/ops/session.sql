-- Connection settings of large inserts.

-- name: unordered_inserts
-- Large inserts whose row order does not matter: DuckDB need not buffer rows to keep their order,
-- which lets it stay within its memory limit (see sql/ops/session.sql).
set preserve_insertion_order = false;

-- name: ordered_inserts
-- Back to DuckDB's default: rows keep the order in which they were inserted.
reset preserve_insertion_order;
