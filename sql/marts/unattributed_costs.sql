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

-- name: comments
-- What the view and each column hold (read into DuckDB's catalog, the Dagster column schemas and
-- docs/warehouse.md); replacing the view drops them, so they follow every `create`.
comment on view unattributed_costs is
    'Spend attributed to no training run per (provider, account, service, resource, billing period, currency), '
    'newest period first and largest first: the tag-hygiene worklist. Money is DECIMAL(38,10).';
comment on column unattributed_costs.provider is 'ProviderName of the lines.';
comment on column unattributed_costs.account is 'SubAccountId of the lines (AWS account, GCP project).';
comment on column unattributed_costs.service is 'ServiceName of the lines.';
comment on column unattributed_costs.resource is 'ResourceId of the lines; NULL for charges without a resource.';
comment on column unattributed_costs.billing_period is 'The billing month, as its first day.';
comment on column unattributed_costs.currency is 'BillingCurrency of the amounts.';
comment on column unattributed_costs.cost_category is 'A cost category of the lines.';
comment on column unattributed_costs.owner is 'An owner the lines name (a tag), who to ask; NULL where none.';
comment on column unattributed_costs.billed_cost is 'Sum of the unattributed billed cost.';
comment on column unattributed_costs.effective_cost is 'Sum of the unattributed effective cost.';
comment on column unattributed_costs.share_of_period is
    'effective_cost / all effective cost of the billing period in the currency, rounded to 6 decimals (0.25 is a '
    'quarter); NULL when that total is 0.';
