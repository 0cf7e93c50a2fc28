-- All allocations of one billing period, before they are rebuilt (same transaction).
delete from cost_allocations
where date_trunc('month', BillingPeriodStart) = $billing_period
