-- The configuration one period's attribution reads, as working tables of this connection,
-- and their removal once the period's allocations are written.

-- name: create_dimension_keys
-- The configured tag keys of each attribution dimension, in priority order (this connection only).
create or replace temp table attribution_keys (dimension varchar, tag_key varchar, priority integer);

-- name: insert_dimension_key
insert into attribution_keys values ($dimension, $tag_key, $priority);

-- name: create_shared_rules
-- The configured shared-cost rules (attribution.shared), their column globs and fixed weights
-- (this connection only).
create or replace temp table shared_rules (rule_name varchar, priority integer, split varchar, condition_count integer);
create or replace temp table shared_rule_conditions (rule_name varchar, column_name varchar, pattern varchar);
create or replace temp table shared_rule_weights (rule_name varchar, training_run varchar, weight decimal(38, 10));

-- name: insert_shared_rule
insert into shared_rules values ($rule_name, $priority, $split, $condition_count);

-- name: insert_shared_rule_condition
insert into shared_rule_conditions values ($rule_name, $column_name, $pattern);

-- name: insert_shared_rule_weight
insert into shared_rule_weights values ($rule_name, $training_run, $weight);

-- name: create_commitment_rules
-- The commitment chargeback rules in force (attribution.commitments), their CommitmentDiscountId
-- globs and fixed weights (this connection only).
create or replace temp table commitment_rules (rule_name varchar, priority integer, split varchar, pattern varchar);
create or replace temp table commitment_rule_weights (rule_name varchar, training_run varchar, weight decimal(38, 10));

-- name: insert_commitment_rule
insert into commitment_rules values ($rule_name, $priority, $split, $pattern);

-- name: insert_commitment_rule_weight
insert into commitment_rule_weights values ($rule_name, $training_run, $weight);

-- name: drop
-- The working tables of one period's attribution, dropped once its allocations are written.
drop table if exists temp.line_dimensions;
drop table if exists temp.node_line_usage;
drop table if exists temp.cluster_shares;
drop table if exists temp.allocation_shares;
drop table if exists temp.shared_line_rules;
drop table if exists temp.commitment_line_rules;
