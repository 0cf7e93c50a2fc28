insert into shared_rules values ($rule_name, $priority, $split, $condition_count)
