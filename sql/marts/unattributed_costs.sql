-- unattributed_costs: the tag-hygiene worklist (a view), and the untagged-share check.

-- name: create
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
order by billing_period desc, abs(effective_cost) desc;

-- name: count
-- Rows of the unattributed_costs view.
select count(*) from unattributed_costs;

-- name: share
-- Per billing period and currency: total effective spend, the part with no training run and its
-- share (the reports and the untagged_share check both read it).
with allocations as (
    select
        cast(date_trunc('month', BillingPeriodStart) as date) as billing_period,
        BillingCurrency as currency,
        training_run,
        effective_cost
    from cost_allocations
),

final as (
    select
        billing_period,
        currency,
        sum(effective_cost) as effective_cost,
        coalesce(sum(effective_cost) filter (where training_run is null), 0) as unattributed_cost,
        coalesce(sum(effective_cost) filter (where training_run is null), 0)
            / nullif(sum(effective_cost), 0) as unattributed_share
    from allocations
    group by billing_period, currency
)

select * from final
order by billing_period, currency;

-- name: top_offenders
-- The largest unattributed resources of the given billing periods: who to ask for tags.
with unattributed as (
    select *
    from unattributed_costs
    where billing_period in (select unnest($billing_periods::date[]))
),

final as (
    select billing_period, provider, account, service, resource, owner, currency, effective_cost, share_of_period
    from unattributed
)

select * from final
order by abs(effective_cost) desc, billing_period, provider, service, resource
limit $limit;
