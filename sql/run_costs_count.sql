-- Rows of the run_costs view.
select count(*) from run_costs
