-- The inputs digest of the reports off a lake (a warehouse file): on a lake the files of its tables
-- stand for their rows (pipelines/reports/writer.py, _warehouse_digest).

-- name: digest
-- The digest of everything the reports show: a checksum of every cost_allocations row (the sum of
-- its rows' hashes: exact up to hash collisions, one pass, no sort), the waste items and the
-- recommendations likewise, and the small tables the reports read, row by row. The reconciliation
-- the reports show is a function of the good loads (raw control totals; every change of
-- focus_line_items is one) and cost_allocations, so those `loads` rows stand for it: the view
-- itself reads every line item.
-- Equal digests mean reports already written stay valid.
with allocations as (
    select concat_ws(':', coalesce(sum(cast(hash(cost_allocations) as hugeint)), 0), count(*)) as digest
    from cost_allocations
),

registry as (
    select coalesce(md5(string_agg(cast(run_registry as varchar), '|' order by training_run)), '') as digest
    from run_registry
),

baselines as (
    select coalesce(md5(string_agg(cast(budget_baselines as varchar), '|' order by training_run, cost_category)), '')
        as digest
    from budget_baselines
),

variance as (
    select coalesce(md5(string_agg(cast(budget_variance as varchar), '|' order by training_run, cost_category)), '')
        as digest
    from budget_variance
),

alerts as (
    select
        coalesce(
            md5(string_agg(cast(budget_alerts as varchar), '|' order by kind, training_run, resource_id, scope_kind,
                scope, period, threshold, crossed_on)),
            ''
        ) as digest
    from budget_alerts
),

group_variance as (
    select
        coalesce(
            md5(string_agg(cast(group_budget_variance as varchar), '|' order by budget_file, period, cost_category)), ''
        ) as digest
    from group_budget_variance
),

loads_recorded as (
    select coalesce(md5(string_agg(cast(loads as varchar), '|' order by load_id)), '') as digest
    from loads
    where status = 'loaded'
),

waste_items as (
    select concat_ws(':', coalesce(sum(cast(hash(waste) as hugeint)), 0), count(*)) as digest
    from waste
),

progress as (
    select coalesce(md5(string_agg(cast(run_progress as varchar), '|' order by training_run)), '') as digest
    from run_progress
),

pricing as (
    select coalesce(md5(string_agg(cast(run_pricing as varchar), '|' order by training_run, pricing, currency)), '')
        as digest
    from run_pricing
),

causes as (
    select coalesce(md5(string_agg(
        cast(variance_causes as varchar), '|' order by training_run, parent, cause, pricing
    )), '') as digest
    from variance_causes
),

provisional as (
    select
        coalesce(
            md5(string_agg(cast(provisional_spend as varchar), '|' order by training_run, billed_through, status)), ''
        ) as digest
    from provisional_spend
),

recommended as (
    select concat_ws(':', coalesce(sum(cast(hash(recommendations) as hugeint)), 0), count(*)) as digest
    from recommendations
),

left_out as (
    select concat_ws(':', coalesce(sum(cast(hash(recommendations_left_out) as hugeint)), 0), count(*)) as digest
    from recommendations_left_out
),

final as (
    select md5(concat_ws(
        '#', allocations.digest, registry.digest, baselines.digest, variance.digest, alerts.digest,
        loads_recorded.digest, waste_items.digest, progress.digest, pricing.digest, causes.digest,
        provisional.digest, recommended.digest, left_out.digest, group_variance.digest
    )) as inputs_digest
    from allocations, registry, baselines, variance, alerts, loads_recorded, waste_items, progress, pricing, causes,
        provisional, recommended, left_out, group_variance
)

select * from final;
