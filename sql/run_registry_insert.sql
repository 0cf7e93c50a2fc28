insert into run_registry values (
    $training_run, $experiment, $dataset_version, $owner, $window_start, $window_end, $resources, $weight
)
