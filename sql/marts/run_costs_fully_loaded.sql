-- run_costs_fully_loaded: each run's direct cost and its share of the spend no run owns.

-- name: insert
-- Rebuilds run_costs_fully_loaded. Money is EffectiveCost. Each amount no run owns, per billing
-- period, currency and kind, goes to a pool of runs of the same period and currency: a shared
-- cluster's idle capacity to the runs with allocations on that cluster, else (and every other
-- kind) to the runs with allocations from its provider, else to every run of the period. Each
-- pool's amount is split among its runs by their direct cost in the pool (the cluster's, the
-- provider's or all of it; a negative one weighs 0, a pool whose runs all weigh 0 splits equally)
-- by largest remainder, so the shares sum exactly to the amount. A period's unowned spend in a
-- currency without a run stays out (unattributed_costs lists it).
delete from run_costs_fully_loaded;

insert into run_costs_fully_loaded by name
with allocations as (
    select
        cast(date_trunc('month', BillingPeriodStart) as date) as billing_period,
        BillingCurrency as currency,
        ProviderName as provider,
        cluster,
        training_run,
        sum(effective_cost) as effective_cost
    from cost_allocations
    where training_run is not null or allocation_method = 'idle_capacity'
    group by all
),

unattributed as (
    select * from unattributed_costs
),

run_allocations as (
    select * from allocations
    where training_run is not null
),

-- every pool's runs and their weight: the runs of a cluster, of a provider, of the whole period
pool_runs as (
    select billing_period, currency, 'cluster' as pool_kind, cluster as pool, training_run, sum(effective_cost) as cost
    from run_allocations
    where cluster is not null
    group by all
    union all
    select billing_period, currency, 'provider', provider, training_run, sum(effective_cost)
    from run_allocations
    group by all
    union all
    select billing_period, currency, 'period', null, training_run, sum(effective_cost)
    from run_allocations
    group by all
),

unowned as (
    select billing_period, currency, provider, cluster, 'idle_capacity' as kind, effective_cost
    from allocations
    where training_run is null
    union all
    select
        billing_period,
        currency,
        provider,
        null,
        case spend_kind
            when 'commitment' then 'unused_commitment'
            when 'tax' then 'tax'
            when 'support' then 'support'
            else 'other_unattributed'
        end,
        effective_cost
    from unattributed
),

-- each unowned amount's pool: its cluster's runs, else its provider's, else the period's
pooled as (
    select
        unowned.billing_period,
        unowned.currency,
        unowned.kind,
        case
            when cluster_pool.pool is not null then 'cluster'
            when provider_pool.pool is not null then 'provider'
            else 'period'
        end as pool_kind,
        coalesce(cluster_pool.pool, provider_pool.pool) as pool,
        unowned.effective_cost
    from unowned
    left join (
        select distinct billing_period, currency, pool from pool_runs where pool_kind = 'cluster'
    ) as cluster_pool
        on unowned.billing_period = cluster_pool.billing_period
        and unowned.currency is not distinct from cluster_pool.currency
        and unowned.cluster = cluster_pool.pool
    left join (
        select distinct billing_period, currency, pool from pool_runs where pool_kind = 'provider'
    ) as provider_pool
        on unowned.billing_period = provider_pool.billing_period
        and unowned.currency is not distinct from provider_pool.currency
        and unowned.provider = provider_pool.pool
),

splits as (
    select billing_period, currency, kind, pool_kind, pool, sum(effective_cost) as amount
    from pooled
    group by all
),

split_parts as (  -- noqa: ST03
    select
        {
            'billing_period': splits.billing_period,
            'currency': splits.currency,
            'kind': splits.kind,
            'pool_kind': splits.pool_kind,
            'pool': splits.pool
        } as split_key,
        pool_runs.training_run as member,
        splits.amount,
        greatest(pool_runs.cost, 0) as weight
    from splits
    inner join pool_runs
        on splits.billing_period = pool_runs.billing_period
        and splits.currency is not distinct from pool_runs.currency
        and splits.pool_kind = pool_runs.pool_kind
        and splits.pool is not distinct from pool_runs.pool
),

shares as (
    select
        split_key.billing_period,
        split_key.currency,
        member as training_run,
        coalesce(sum(part) filter (where split_key.kind = 'idle_capacity'), 0) as idle_capacity_share,
        coalesce(sum(part) filter (where split_key.kind = 'unused_commitment'), 0) as unused_commitment_share,
        coalesce(sum(part) filter (where split_key.kind = 'tax'), 0) as tax_share,
        coalesce(sum(part) filter (where split_key.kind = 'support'), 0) as support_share,
        coalesce(sum(part) filter (where split_key.kind = 'other_unattributed'), 0) as other_unattributed_share
    from largest_remainder_split(split_parts)
    group by all
),

run_shares as (
    select
        runs.training_run,
        runs.billing_period,
        runs.currency,
        runs.cost as direct_cost,
        coalesce(shares.idle_capacity_share, 0) as idle_capacity_share,
        coalesce(shares.unused_commitment_share, 0) as unused_commitment_share,
        coalesce(shares.tax_share, 0) as tax_share,
        coalesce(shares.support_share, 0) as support_share,
        coalesce(shares.other_unattributed_share, 0) as other_unattributed_share
    from pool_runs as runs
    left join shares
        on runs.training_run = shares.training_run
        and runs.billing_period = shares.billing_period
        and runs.currency is not distinct from shares.currency
    where runs.pool_kind = 'period'
),

final as (
    select
        *,
        direct_cost
        + idle_capacity_share
        + unused_commitment_share
        + tax_share
        + support_share
        + other_unattributed_share as fully_loaded_cost
    from run_shares
)

select * from final
order by billing_period, currency, training_run;

-- name: preview
-- Per billing period, currency and run: direct and fully loaded cost, for the asset's metadata.
select training_run, billing_period, currency, direct_cost, fully_loaded_cost
from run_costs_fully_loaded
order by billing_period, currency, fully_loaded_cost desc, training_run;

-- name: count
select count(*) from run_costs_fully_loaded;
