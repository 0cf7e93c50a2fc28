-- commitment_utilization: each commitment's cost, use and unused part per billing period.

-- name: insert
-- Rebuilds commitment_utilization from the focus_line_items of every commitment and the
-- allocations of its unused rows. The amortized cost of a commitment lies on its covered usage
-- (AWS) or on the rows derived from its fee (GCP: covered usage is billed net of the commitment's
-- credit, the fee's used part is a row of status Used and x_DerivedFrom the fee's key); its unused
-- part on rows of status Unused either way.
delete from commitment_utilization;

insert into commitment_utilization by name
with line_items as (
    select
        x_LineItemKey,
        x_SourceName,
        ProviderName,
        BillingCurrency,
        cast(date_trunc('month', BillingPeriodStart) as date) as billing_period,
        CommitmentDiscountId,
        CommitmentDiscountType,
        CommitmentDiscountCategory,
        CommitmentDiscountName,
        CommitmentDiscountStatus,
        ChargeCategory,
        x_DerivedFrom,
        SkuId,
        coalesce(BilledCost, 0) as billed_cost,
        coalesce(EffectiveCost, 0) as effective_cost,
        coalesce(ListCost, 0) as list_cost,
        CommitmentDiscountStatus = 'Used' and ChargeCategory = 'Usage' and x_DerivedFrom is null as covered
    from focus_line_items
    where CommitmentDiscountId is not null
),

-- usage a commitment could cover: not spot, not derived
usage_lines as (
    select
        x_SourceName,
        BillingCurrency,
        cast(date_trunc('month', BillingPeriodStart) as date) as billing_period,
        SkuId,
        coalesce(ListCost, 0) as list_cost
    from focus_line_items
    where ChargeCategory = 'Usage'
        and x_DerivedFrom is null
        and PricingCategory in ('Standard', 'Committed')
        and SkuId is not null
),

allocations as (
    select x_LineItemKey, effective_cost
    from cost_allocations
    where training_run is not null
),

unused_charged as (
    select line_items.CommitmentDiscountId, line_items.billing_period, line_items.x_SourceName,
        line_items.BillingCurrency, sum(allocations.effective_cost) as unused_charged_cost
    from allocations
    inner join line_items on allocations.x_LineItemKey = line_items.x_LineItemKey
    where line_items.CommitmentDiscountStatus = 'Unused'
    group by all
),

covered_skus as (
    select distinct billing_period, x_SourceName, BillingCurrency, CommitmentDiscountId, SkuId
    from line_items
    where covered and SkuId is not null
),

eligible as (
    select
        covered_skus.billing_period,
        covered_skus.x_SourceName,
        covered_skus.BillingCurrency,
        covered_skus.CommitmentDiscountId,
        sum(usage_lines.list_cost) as eligible_list_cost
    from covered_skus
    inner join usage_lines
        on covered_skus.billing_period = usage_lines.billing_period
        and covered_skus.x_SourceName = usage_lines.x_SourceName
        and covered_skus.BillingCurrency is not distinct from usage_lines.BillingCurrency
        and covered_skus.SkuId = usage_lines.SkuId
    group by all
),

commitments as (
    select
        billing_period,
        x_SourceName,
        BillingCurrency,
        CommitmentDiscountId,
        max(ProviderName) as provider,
        max(CommitmentDiscountType) as commitment_type,
        max(CommitmentDiscountCategory) as commitment_category,
        max(CommitmentDiscountName) as commitment_name,
        count(*) filter (where ChargeCategory = 'Purchase') as fee_rows,
        sum(billed_cost) filter (where ChargeCategory = 'Purchase') as fee_billed_cost,
        count(*) filter (where CommitmentDiscountStatus = 'Used' and x_DerivedFrom is not null) as fee_used_rows,
        sum(effective_cost) filter (where CommitmentDiscountStatus = 'Used' and x_DerivedFrom is not null)
            as fee_used_cost,
        coalesce(sum(effective_cost) filter (where covered), 0) as covered_effective_cost,
        coalesce(sum(list_cost) filter (where covered), 0) as covered_list_cost,
        coalesce(sum(effective_cost) filter (where CommitmentDiscountStatus = 'Unused'), 0) as unused_cost
    from line_items
    group by billing_period, x_SourceName, BillingCurrency, CommitmentDiscountId
),

used as (
    select
        *,
        case
            when fee_rows = 0 then null
            when fee_used_rows > 0 then fee_used_cost
            else covered_effective_cost
        end as used_cost
    from commitments
),

final as (
    select
        used.billing_period,
        used.x_SourceName as source_name,
        used.provider,
        used.BillingCurrency as currency,
        used.CommitmentDiscountId as commitment_id,
        used.commitment_type,
        used.commitment_category,
        used.commitment_name,
        used.fee_billed_cost,
        used.used_cost + used.unused_cost as committed_cost,
        used.used_cost,
        used.unused_cost,
        coalesce(unused_charged.unused_charged_cost, 0) as unused_charged_cost,
        decimal_divide(used.used_cost, used.used_cost + used.unused_cost) as utilization,
        used.covered_list_cost,
        eligible.eligible_list_cost,
        decimal_divide(used.covered_list_cost, eligible.eligible_list_cost) as coverage
    from used
    left join eligible
        on used.billing_period = eligible.billing_period
        and used.x_SourceName = eligible.x_SourceName
        and used.BillingCurrency is not distinct from eligible.BillingCurrency
        and used.CommitmentDiscountId = eligible.CommitmentDiscountId
    left join unused_charged
        on used.billing_period = unused_charged.billing_period
        and used.x_SourceName = unused_charged.x_SourceName
        and used.BillingCurrency is not distinct from unused_charged.BillingCurrency
        and used.CommitmentDiscountId = unused_charged.CommitmentDiscountId
)

select * from final
order by billing_period, source_name, commitment_id, currency;

-- name: summary
-- Per billing period and commitment: the asset's Markdown preview.
select billing_period, commitment_type, commitment_id, currency, committed_cost, unused_cost, unused_charged_cost,
    utilization, coverage
from commitment_utilization
order by billing_period, source_name, commitment_id, currency;

-- name: count
-- Rows of commitment_utilization.
select count(*) from commitment_utilization;
