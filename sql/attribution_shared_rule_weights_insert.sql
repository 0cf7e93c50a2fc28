insert into shared_rule_weights values ($rule_name, $training_run, $weight)
