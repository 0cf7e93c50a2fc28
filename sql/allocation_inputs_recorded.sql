-- The inputs digest the period's cost_allocations were last computed from, if any.
select inputs_digest from allocation_inputs where billing_period = $billing_period
