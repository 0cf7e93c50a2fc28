-- The inputs digest of a billing period's cost_allocations (recorded in step_inputs).

-- name: digest
-- The digest of one billing period's attribution inputs: the latest good load of each source
-- for the period (a reload changes it), the run registry, the resource tag snapshots, the
-- scheduler sources' intervals, nodes and node tags, and the attribution settings ($settings, as
-- text).
with period_loads as (
    select source_name, arg_max(load_id, finished_at) as load_id
    from loads
    where billing_period = $billing_period and status = 'loaded'
    group by source_name
),

registry as (
    select * from run_registry
),

snapshots as (
    select source_name, snapshot_at, resource_arn, md5(cast(tags as varchar)) as tags_digest
    from resource_tag_snapshots
),

clusters as (
    select 'interval' as kind, cast(cluster_intervals as varchar) as row_text from cluster_intervals
    union all
    select 'node' as kind, cast(cluster_nodes as varchar) as row_text from cluster_nodes
    union all
    select 'tag' as kind, cast(cluster_node_tags as varchar) as row_text from cluster_node_tags
),

digests as (
    select
        (
            select coalesce(string_agg(source_name || '=' || load_id, ',' order by source_name), '')
            from period_loads
        ) as loads_digest,
        (
            select coalesce(md5(string_agg(cast(registry as varchar), '|' order by training_run)), '')
            from registry
        ) as registry_digest,
        (
            select coalesce(md5(string_agg(source_name || snapshot_at || resource_arn || tags_digest, '|'
                order by source_name, snapshot_at, resource_arn)), '')
            from snapshots
        ) as snapshots_digest,
        (
            select coalesce(md5(string_agg(kind || row_text, '|' order by kind, row_text)), '')
            from clusters
        ) as clusters_digest
),

final as (
    select
        md5(concat_ws('#', loads_digest, registry_digest, snapshots_digest, clusters_digest, $settings))
            as inputs_digest
    from digests
)

select * from final;
