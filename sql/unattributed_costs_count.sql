-- Rows of the unattributed_costs view.
select count(*) from unattributed_costs
