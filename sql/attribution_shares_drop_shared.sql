-- Lines a shared-cost rule takes leave the step 1-3 shares; step 4 splits them afterwards.
delete from allocation_shares
where x_LineItemKey in (select x_LineItemKey from shared_line_rules)
