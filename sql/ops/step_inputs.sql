-- step_inputs: the inputs digest of each step's last build (pipelines/warehouse/step_inputs.py).

-- name: recorded
-- The inputs digest a step's partition was last built from, if any.
select inputs_digest
from step_inputs
where step = $step and partition_key = $partition_key;

-- name: outcome
-- What a check's step concluded from the inputs given, when its last record came from them.
select outcome
from step_inputs
where step = $step and partition_key = $partition_key and inputs_digest = $inputs_digest;

-- name: builds
-- When each partition of a step was last built, e.g. the allocations of each billing period (the
-- reconciliation's allocation_pending reads them).
select partition_key, recorded_at
from step_inputs
where step = $step
order by partition_key;

-- name: good_loads
-- The good loads (status loaded), as one digest: what the reconciliation reads of `loads`. A night
-- whose deliveries were all loaded before appends rows (status unchanged), no good load.
select coalesce(md5(string_agg(cast(loads as varchar), '|' order by load_id)), '') as digest
from loads
where status = 'loaded';

-- name: forget
-- The partition's previous record goes before the new one is written, in the build's transaction.
delete from step_inputs
where step = $step and partition_key = $partition_key;

-- name: record
-- Records the inputs digest a step's partition was just built from (in the build's transaction).
insert into step_inputs (step, partition_key, inputs_digest, recorded_at, outcome)
values ($step, $partition_key, $inputs_digest, $recorded_at, $outcome);

-- name: table_files
-- The data files of a lake table and the delete file of each, as one text (pipelines/warehouse/step_inputs.py,
-- tables_inputs): DuckLake never rewrites a file, so the same text means the same rows.
select coalesce(string_agg(concat_ws('+', data_file, delete_file), '|' order by data_file), '') as files
from ducklake_list_files('lake', $table_name);
