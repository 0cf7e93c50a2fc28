insert into shared_rule_conditions values ($rule_name, $column_name, $pattern)
