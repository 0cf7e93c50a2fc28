-- Rows of the reconciliation view.
select count(*) from reconciliation
