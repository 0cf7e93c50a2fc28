-- Records the inputs digest `waste` was just built from.
insert into waste_inputs (inputs_digest, built_at) values ($inputs_digest, $built_at)
