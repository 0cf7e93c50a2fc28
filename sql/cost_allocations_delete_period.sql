-- Allocations of one (source, billing period); rebuilt by the cost_allocations step.
delete from cost_allocations
where x_SourceName = $source_name
    and in_billing_period(BillingPeriodStart, $billing_period)
