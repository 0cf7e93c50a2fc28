-- The scheduler sources' intervals, nodes and node tags, replaced whole from every `slurm` and
-- `kubernetes` source (pipelines/clusters/usage.py).

-- name: delete
-- Empties the three tables before every configured source's rows are inserted again.
delete from cluster_intervals;
delete from cluster_nodes;
delete from cluster_node_tags;

-- name: insert_intervals
-- The intervals of one source, from the Arrow table registered as staged_intervals: each job's
-- labels matched to the attribution dimensions as tags are (normalize_tag_key; of several keys of
-- one dimension, the first attribution.dimensions lists, from the working table attribution_keys).
insert into cluster_intervals by name
with staged as (
    select * from staged_intervals
),

dimension_keys as (
    select dimension, normalize_tag_key(tag_key) as key_norm, priority
    from attribution_keys
),

labels as (
    select
        interval_index,
        normalize_tag_key(entry.key) as key_norm,
        nullif(trim(entry.value), '') as label_value
    from (select interval_index, unnest(map_entries(labels)) as entry from staged) as label_entries
),

dimensions as (
    select
        labels.interval_index,
        dimension_keys.dimension,
        arg_min(labels.label_value, dimension_keys.priority) as dimension_value
    from labels
    inner join dimension_keys on labels.key_norm = dimension_keys.key_norm
    where labels.label_value is not null
    group by labels.interval_index, dimension_keys.dimension
),

job_dimensions as (
    select
        interval_index,
        max(dimension_value) filter (where dimension = 'training_run') as training_run,
        max(dimension_value) filter (where dimension = 'experiment') as experiment,
        max(dimension_value) filter (where dimension = 'dataset_version') as dataset_version,
        max(dimension_value) filter (where dimension = 'owner') as owner,
        map_from_entries(
            coalesce(
                list({'key': dimension, 'value': dimension_value}) filter (where not is_built_in_dimension(dimension)),
                []
            )
        ) as custom_dimensions
    from dimensions
    group by interval_index
),

final as (
    select
        $source_name as source_name,
        staged.cluster,
        staged.node,
        staged.resource_id,
        staged.job_id,
        job_dimensions.training_run,
        job_dimensions.experiment,
        job_dimensions.dataset_version,
        job_dimensions.owner,
        coalesce(job_dimensions.custom_dimensions, map()) as custom_dimensions,
        staged.interval_start,
        staged.interval_end,
        staged.gpus,
        staged.cpus
    from staged
    left join job_dimensions on staged.interval_index = job_dimensions.interval_index
)

select * from final;

-- name: insert_nodes
-- The nodes of one source, from the Arrow table registered as staged_nodes.
insert into cluster_nodes by name
select $source_name as source_name, cluster, node, resource_id, valid_from, valid_to, gpus, cpus
from staged_nodes;

-- name: insert_node_tag
-- The tag naming the hosts of one source's cluster (`nodes: {tag: KEY}`).
insert into cluster_node_tags values ($source_name, $cluster, $tag_key);

-- name: summary
-- Per source and cluster: intervals, jobs, runs, nodes, GPU-hours of the finished intervals and
-- hosts no map names, for the cluster_usage asset's metadata.
with usage as (
    select * from cluster_usage
),

final as (
    select
        source,
        cluster,
        count(*) as intervals,
        count(distinct job_id) as jobs,
        count(distinct training_run) as training_runs,
        count(distinct node) as nodes,
        count(*) filter (where running) as running,
        decimal_divide(sum(gpus * date_diff('second', start, "end")), 3600) as gpu_hours,
        count(distinct node) filter (where resource_id is null) as unmapped_hosts
    from usage
    group by source, cluster
)

select * from final
order by source, cluster;

-- name: unmapped_hosts
-- The hosts jobs ran on that no node map resolves to a cloud resource: their jobs and GPU-hours.
with usage as (
    select * from cluster_usage
    where resource_id is null
),

final as (
    select
        source,
        cluster,
        node,
        count(distinct job_id) as jobs,
        decimal_divide(sum(gpus * date_diff('second', start, "end")), 3600) as gpu_hours,
        min(start) as first_start,
        max("end") as last_end
    from usage
    group by source, cluster, node
)

select * from final
order by source, cluster, node;
