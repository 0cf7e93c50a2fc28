-- Lines a shared-cost rule takes leave the step 1-3 shares; step 4 splits them afterwards.
delete from allocation_shares
where line_row in (select line_row from shared_line_rules)
