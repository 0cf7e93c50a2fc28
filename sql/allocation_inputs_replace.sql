-- Records the inputs digest a period's cost_allocations were just computed from.
insert or replace into allocation_inputs (billing_period, inputs_digest, allocated_at)
values ($billing_period, $inputs_digest, $allocated_at)
