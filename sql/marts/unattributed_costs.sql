-- unattributed_costs: the tag-hygiene worklist (a table, sql/schema/unattributed_costs.sql), and the
-- untagged-share check.

-- name: insert
-- Spend with no training run, ranked: the tag-hygiene worklist, the spend tagging could move first.
-- A shared cluster's idle capacity is not on it: no tag moves it (cluster_utilization shows it).
-- Rebuilt whole, in the worklist's order.
delete from unattributed_costs;

insert into unattributed_costs by name
-- allocations is read more than once: scanning cost_allocations again costs less than DuckDB
-- materializing every allocation row as a CTE
with allocations as not materialized (
    select
        *,
        cast(date_trunc('month', BillingPeriodStart) as date) as billing_period
    from cost_allocations
),

untaggable as (
    select x_LineItemKey, CommitmentDiscountId, spend_kind
    from untaggable_lines()
),

period_totals as (
    select billing_period, BillingCurrency, sum(effective_cost) as period_effective_cost
    from allocations
    group by all
),

unattributed_parts as (
    select
        allocations.*,
        untaggable.CommitmentDiscountId,
        unattributed_spend_kind(untaggable.spend_kind, allocations.allocation_rule) as spend_kind
    from allocations
    left join untaggable on allocations.x_LineItemKey = untaggable.x_LineItemKey
    where allocations.training_run is null and allocations.allocation_method <> 'idle_capacity'
),

unattributed as (
    select
        ProviderName as provider,
        SubAccountId as account,
        ServiceName as service,
        ResourceId as resource,
        case when spend_kind = 'commitment' then CommitmentDiscountId end as commitment,
        spend_kind,
        billing_period,
        BillingCurrency,
        any_value(x_CostCategory) as cost_category,
        any_value(owner) filter (where owner is not null) as owner,
        sum(billed_cost) as billed_cost,
        sum(effective_cost) as effective_cost
    from unattributed_parts
    group by
        ProviderName, SubAccountId, ServiceName, ResourceId, commitment, spend_kind, billing_period, BillingCurrency
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
        end as share_of_period,
        unattributed.spend_kind = 'resource' as taggable,
        unattributed.spend_kind,
        unattributed.commitment
    from unattributed
    inner join period_totals using (billing_period, BillingCurrency)
)

select * from final
order by billing_period desc, taggable desc, abs(effective_cost) desc;

-- name: count
-- Rows of unattributed_costs.
select count(*) from unattributed_costs;

-- name: share
-- Per billing period and currency: total effective spend, the part with no training run and its
-- share, and the untagged part: spend with no run that tagging could move (spend kind resource,
-- unattributed_spend_kind) and its share of the total (the reports and the untagged_share check read it).
with allocations as (
    select
        x_LineItemKey,
        cast(date_trunc('month', BillingPeriodStart) as date) as billing_period,
        BillingCurrency as currency,
        -- a cluster's idle capacity is attributed to the cluster, not left for tags to move
        training_run is null and allocation_method <> 'idle_capacity' as unattributed,
        allocation_rule,
        effective_cost
    from cost_allocations
),

untaggable as (
    select x_LineItemKey, spend_kind
    from untaggable_lines()
),

kinds as (
    select
        allocations.*,
        allocations.unattributed
        and unattributed_spend_kind(untaggable.spend_kind, allocations.allocation_rule) = 'resource' as untagged
    from allocations
    left join untaggable on allocations.x_LineItemKey = untaggable.x_LineItemKey
),

final as (
    select
        billing_period,
        currency,
        sum(effective_cost) as effective_cost,
        coalesce(sum(effective_cost) filter (where unattributed), 0) as unattributed_cost,
        coalesce(sum(effective_cost) filter (where unattributed), 0)
            / nullif(sum(effective_cost), 0) as unattributed_share,
        coalesce(sum(effective_cost) filter (where untagged), 0) as untagged_cost,
        coalesce(sum(effective_cost) filter (where untagged), 0) / nullif(sum(effective_cost), 0) as untagged_share
    from kinds
    group by billing_period, currency
)

select * from final
order by billing_period, currency;

-- name: top_offenders
-- The largest untagged resources (unattributed and taggable) of the given billing periods: who to
-- ask for tags.
with unattributed as (
    select *
    from unattributed_costs
    where taggable and billing_period in (select unnest($billing_periods::date[]))
),

final as (
    select billing_period, provider, account, service, resource, owner, currency, effective_cost, share_of_period
    from unattributed
)

select * from final
order by abs(effective_cost) desc, billing_period, provider, service, resource
limit $limit;

-- name: not_taggable
-- Per billing period, currency and spend kind: the spend with no training run that is not on the
-- tagging worklist (commitments, tax, credits, support, other purchases, charges without a
-- resource, registered resources outside their run's window), listed apart from the untagged
-- share: its line items and effective cost.
with allocations as (
    select
        x_LineItemKey,
        cast(date_trunc('month', BillingPeriodStart) as date) as billing_period,
        BillingCurrency as currency,
        allocation_rule,
        effective_cost
    from cost_allocations
    where training_run is null and allocation_method <> 'idle_capacity'
),

untaggable as (
    select x_LineItemKey, spend_kind
    from untaggable_lines()
),

kinds as (
    select
        allocations.*,
        unattributed_spend_kind(untaggable.spend_kind, allocations.allocation_rule) as spend_kind
    from allocations
    left join untaggable on allocations.x_LineItemKey = untaggable.x_LineItemKey
),

final as (
    select
        billing_period,
        currency,
        spend_kind,
        count(distinct x_LineItemKey) as line_items,
        sum(effective_cost) as effective_cost
    from kinds
    where spend_kind <> 'resource'
    group by billing_period, currency, spend_kind
)

select * from final
order by billing_period, currency, spend_kind;
