-- Large inserts whose row order does not matter: DuckDB need not buffer rows to keep their order,
-- which lets it stay within its memory limit (see sql/session_ordered_inserts.sql).
set preserve_insertion_order = false
