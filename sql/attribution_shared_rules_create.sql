-- The configured shared-cost rules (attribution.shared), their column globs and fixed weights
-- (this connection only).
create or replace temp table shared_rules (rule_name varchar, priority integer, split varchar, condition_count integer);
create or replace temp table shared_rule_conditions (rule_name varchar, column_name varchar, pattern varchar);
create or replace temp table shared_rule_weights (rule_name varchar, training_run varchar, weight decimal(38, 10));
