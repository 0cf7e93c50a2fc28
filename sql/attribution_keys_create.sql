-- The configured tag keys of each attribution dimension, in priority order (this connection only).
create or replace temp table attribution_keys (dimension varchar, tag_key varchar, priority integer)
