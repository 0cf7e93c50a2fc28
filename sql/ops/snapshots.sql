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

-- name: current
-- The snapshot the connection reads (the newest, or the one it was attached at) and its time.
select snapshots.snapshot_id, snapshots.snapshot_time
from lake.snapshots() as snapshots
where snapshots.snapshot_id = (select current_snapshot.id from lake.current_snapshot() as current_snapshot);
