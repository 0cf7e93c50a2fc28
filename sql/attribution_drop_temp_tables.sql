-- The working tables of one period's attribution, dropped once its allocations are written.
drop table if exists temp.line_dimensions;
drop table if exists temp.allocation_shares;
drop table if exists temp.shared_line_rules;
