-- Allocations of one (source, billing period); rebuilt by the cost_allocations step.
delete from cost_allocations
where x_SourceName = $source_name
    and date_trunc('month', BillingPeriodStart) = $billing_period
