-- The lake's snapshots: each commit is one, named after what it committed.

-- name: catalog_type
-- What kind of catalog the connection writes to: `ducklake` for a lake.
select type
from duckdb_databases()
where database_name = current_database();

-- name: describe_commit
-- Names the snapshot the running transaction will commit, with JSON details beside the message.
call ducklake_set_commit_message('lake', 'runledger', $message, extra_info => $extra);

-- name: last_committed
-- The snapshot the connection's last transaction committed.
select * from ducklake_last_committed_snapshot('lake');
