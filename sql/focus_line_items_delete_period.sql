-- Removes one (source, billing period) before its new snapshot is inserted (same transaction).
delete from focus_line_items
where x_SourceName = $source_name
    and date_trunc('month', BillingPeriodStart) = $billing_period
