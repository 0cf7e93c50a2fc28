-- The run registry table, replaced whole from `attribution.runs`.

-- name: delete
delete from run_registry;

-- name: insert
insert into run_registry values (
    $training_run, $experiment, $dataset_version, $owner, $window_start, $window_end, $resources, $weight
);
