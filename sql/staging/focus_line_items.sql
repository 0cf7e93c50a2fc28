-- One (source, billing period) of focus_line_items: its replacement, its loaded totals and
-- what the ingest assets show of it.

-- name: delete_period
-- Removes one (source, billing period) before its new snapshot is inserted (same transaction).
delete from focus_line_items
where x_SourceName = $source_name
    and in_billing_period(BillingPeriodStart, $billing_period);

-- name: first_large_amount
-- The first line (by file and key) of one (source, billing period) with an amount of money of
-- $limit or more in magnitude, and the column: what the exact arithmetic of later steps (sums,
-- shares, `decimal_divide`) could not hold. The load stops on it.
with large as (
    select
        x_SourceFile,
        x_LineItemKey,
        BilledCost,
        EffectiveCost,
        ListCost,
        ContractedCost,
        ListUnitPrice,
        ContractedUnitPrice,
        x_SplitCost,
        x_SplitUnusedCost
    from focus_line_items
    where x_SourceName = $source_name
        and in_billing_period(BillingPeriodStart, $billing_period)
        and (
            abs(BilledCost) >= $limit or abs(EffectiveCost) >= $limit or abs(ListCost) >= $limit
            or abs(ContractedCost) >= $limit or abs(ListUnitPrice) >= $limit
            or abs(ContractedUnitPrice) >= $limit or abs(x_SplitCost) >= $limit
            or abs(x_SplitUnusedCost) >= $limit
        )
),

amounts as (
    unpivot large
    on BilledCost, EffectiveCost, ListCost, ContractedCost, ListUnitPrice, ContractedUnitPrice, x_SplitCost,
    x_SplitUnusedCost
    into name column_name value amount
),

final as (
    select
        x_SourceFile as location,
        x_LineItemKey as line_item,
        column_name,
        amount
    from amounts
    where abs(amount) >= $limit
    order by location, line_item, column_name
    limit 1
)

select * from final;

-- name: source_period_totals
-- One source's rows of one billing period in focus_line_items (those RunLedger derived among
-- them apart) and their totals: `focus_totals` (sql/schema/macros.sql), the totals every
-- conservation check compares, over its currencies.
with source_totals as (
    select *
    from focus_totals($billing_period)
    where source_name = $source_name
),

final as (
    select
        cast(coalesce(sum(line_items), 0) as bigint) as rows,
        cast(coalesce(sum(derived_rows), 0) as bigint) as derived_rows,
        coalesce(sum(billed_cost), 0) as billed_cost,
        coalesce(sum(effective_cost), 0) as effective_cost,
        string_agg(currency, ',' order by currency) as currency_list
    from source_totals
)

select * from final;

-- name: period_summary
-- One billing period of focus_line_items per source and currency, beside the raw control totals
-- of the source's latest good load of that period.
with period_rows as (
    select *
    from focus_line_items
    where cast(date_trunc('month', BillingPeriodStart) as date) = $billing_period
),

latest_loads as (
    select source_name, raw_rows, raw_billed_cost, delivery
    from loads
    where status = 'loaded' and billing_period = $billing_period
    qualify row_number() over (partition by source_name order by finished_at desc, load_id desc) = 1
),

focus as (
    select
        x_SourceName as source_name,
        BillingCurrency as currency,
        count(*) as rows,
        count(x_DerivedFrom) as derived_rows,
        sum(BilledCost) as billed_cost,
        sum(EffectiveCost) as effective_cost,
        sum(x_GpuHours) as gpu_hours
    from period_rows
    group by all
),

final as (
    select
        focus.source_name,
        focus.currency,
        focus.rows,
        focus.derived_rows,
        latest_loads.raw_rows,
        focus.billed_cost,
        latest_loads.raw_billed_cost,
        focus.effective_cost,
        focus.gpu_hours,
        latest_loads.delivery
    from focus
    left join latest_loads using (source_name)
)

select * from final
order by source_name, currency;

-- name: period_top_services
-- The most expensive services of a billing period: the Markdown preview of focus_line_items.
with period_rows as (
    select *
    from focus_line_items
    where cast(date_trunc('month', BillingPeriodStart) as date) = $billing_period
),

final as (
    select
        ProviderName as provider,
        ServiceName as service,
        x_CostCategory as cost_category,
        BillingCurrency as currency,
        count(*) as rows,
        sum(EffectiveCost) as effective_cost
    from period_rows
    group by all
)

select * from final
order by abs(effective_cost) desc, provider, service
limit $limit;

-- name: source_newest_charge
-- The newest charge a source has in the warehouse (the freshness check's "as of"): the latest
-- charge start, since monthly charges end in the future.
with source_rows as (
    select ChargePeriodStart
    from focus_line_items
    where x_SourceName = $source_name
),

final as (
    select max(ChargePeriodStart) as newest_charge
    from source_rows
)

select * from final;
