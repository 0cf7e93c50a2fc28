-- All allocations of one billing period, before they are rebuilt (same transaction).
delete from cost_allocations
where in_billing_period(BillingPeriodStart, $billing_period)
