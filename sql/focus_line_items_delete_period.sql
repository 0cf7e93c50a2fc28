-- Removes one (source, billing period) before its new snapshot is inserted (same transaction).
delete from focus_line_items
where x_SourceName = $source_name
    and in_billing_period(BillingPeriodStart, $billing_period)
