-- Spend with no training run, ranked: the tag-hygiene worklist.
create or replace view unattributed_costs as
-- allocations is read more than once: scanning cost_allocations again costs less than DuckDB
-- materializing every allocation row as a CTE
with allocations as not materialized (
    select
        *,
        cast(date_trunc('month', BillingPeriodStart) as date) as billing_period
    from cost_allocations
),

period_totals as (
    select billing_period, BillingCurrency, sum(effective_cost) as period_effective_cost
    from allocations
    group by all
),

unattributed as (
    select
        ProviderName as provider,
        SubAccountId as account,
        ServiceName as service,
        ResourceId as resource,
        billing_period,
        BillingCurrency,
        any_value(x_CostCategory) as cost_category,
        any_value(owner) filter (where owner is not null) as owner,
        sum(billed_cost) as billed_cost,
        sum(effective_cost) as effective_cost
    from allocations
    where training_run is null
    group by ProviderName, SubAccountId, ServiceName, ResourceId, billing_period, BillingCurrency
),

final as (
    select
        unattributed.provider,
        unattributed.account,
        unattributed.service,
        unattributed.resource,
        unattributed.billing_period,
        unattributed.BillingCurrency as currency,
        unattributed.cost_category,
        unattributed.owner,
        unattributed.billed_cost,
        unattributed.effective_cost,
        case
            when period_totals.period_effective_cost = 0 then null
            else round(unattributed.effective_cost / period_totals.period_effective_cost, 6)
        end as share_of_period
    from unattributed
    inner join period_totals using (billing_period, BillingCurrency)
)

select * from final
order by billing_period desc, abs(effective_cost) desc
