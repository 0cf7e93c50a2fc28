-- step_inputs: the inputs digest of each step's last build (pipelines/warehouse/step_inputs.py).

-- name: recorded
-- The inputs digest a step's partition was last built from, if any.
select inputs_digest
from step_inputs
where step = $step and partition_key = $partition_key;

-- name: forget
-- The partition's previous record goes before the new one is written, in the build's transaction.
delete from step_inputs
where step = $step and partition_key = $partition_key;

-- name: record
-- Records the inputs digest a step's partition was just built from (in the build's transaction).
insert into step_inputs (step, partition_key, inputs_digest, recorded_at)
values ($step, $partition_key, $inputs_digest, $recorded_at);

-- name: table_files
-- The data files of a lake table and the delete file of each, as one text (pipelines/warehouse/step_inputs.py,
-- tables_inputs): DuckLake never rewrites a file, so the same text means the same rows.
select coalesce(string_agg(concat_ws('+', data_file, delete_file), '|' order by data_file), '') as files
from ducklake_list_files('lake', $table_name);
