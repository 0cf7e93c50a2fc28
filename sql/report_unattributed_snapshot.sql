-- The unattributed_costs view computed once for all the reports of a batch (this connection
-- only): each run's report picks the resources of its accounts from it.
create or replace temp table report_unattributed_costs as
select * from unattributed_costs
