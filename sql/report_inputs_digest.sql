-- The digest of everything the reports show but the reconciliation (which the report writer reads
-- once and adds itself): a checksum of every cost_allocations row (the sum of its rows' hashes:
-- exact up to hash collisions, one pass, no sort), the waste items likewise, and the small tables
-- the reports read, row by row. Equal digests mean reports already written stay valid.
with allocations as (
    select concat_ws(':', coalesce(sum(cast(hash(cost_allocations) as hugeint)), 0), count(*)) as digest
    from cost_allocations
),

registry as (
    select coalesce(md5(string_agg(cast(run_registry as varchar), '|' order by training_run)), '') as digest
    from run_registry
),

baselines as (
    select coalesce(md5(string_agg(cast(budget_baselines as varchar), '|' order by training_run, cost_category)), '') as digest
    from budget_baselines
),

variance as (
    select coalesce(md5(string_agg(cast(budget_variance as varchar), '|' order by training_run, cost_category)), '') as digest
    from budget_variance
),

alerts as (
    select coalesce(md5(string_agg(cast(budget_alerts as varchar), '|' order by training_run, threshold)), '') as digest
    from budget_alerts
),

waste_items as (
    select concat_ws(':', coalesce(sum(cast(hash(waste) as hugeint)), 0), count(*)) as digest
    from waste
),

final as (
    select md5(concat_ws(
        '#', allocations.digest, registry.digest, baselines.digest, variance.digest, alerts.digest,
        waste_items.digest
    )) as inputs_digest
    from allocations, registry, baselines, variance, alerts, waste_items
)

select * from final
