-- cluster_usage: the scheduler sources' usage intervals on cloud resources (a view).

-- name: create
-- Each job's interval on a node, its host resolved to the node's cloud resource
-- (cluster_node_resources(), sql/schema/macros.sql: the node map valid over the interval, cut at
-- the map's validity) unless the scheduler named it, and a running job ended at the newest billed
-- hour of its node (of its cluster's nodes when no map names its host). An interval whose host no
-- map names keeps resource_id NULL: the `cluster_usage` asset's check lists it, and its share of
-- the node stays idle capacity.
create or replace view cluster_usage as
with intervals as (
    select * from cluster_intervals
),

nodes as (
    select * from cluster_node_resources()
),

mapped as (
    select
        intervals.* exclude (resource_id, interval_start, interval_end),
        coalesce(intervals.resource_id, nodes.resource_id) as resource_id,
        greatest(intervals.interval_start, coalesce(nodes.valid_from, intervals.interval_start)) as interval_start,
        case
            when nodes.valid_to is null then intervals.interval_end
            else least(coalesce(intervals.interval_end, nodes.valid_to), nodes.valid_to)
        end as interval_end
    from intervals
    left join nodes
        on intervals.resource_id is null
        and intervals.source_name = nodes.source_name
        and intervals.cluster = nodes.cluster
        and intervals.node = nodes.node
        and (nodes.valid_to is null or intervals.interval_start < nodes.valid_to)
        and (nodes.valid_from is null or intervals.interval_end is null or intervals.interval_end > nodes.valid_from)
),

running_nodes as (
    select distinct resource_id from mapped
    where interval_end is null
),

-- a node's lines carry its resource id as ResourceId, or (GKE nodes) as ResourceName
billed_ends as (
    select
        running_nodes.resource_id,
        max(coalesce(focus_line_items.ChargePeriodEnd, focus_line_items.ChargePeriodStart)) as billed_end
    from focus_line_items
    inner join running_nodes
        on running_nodes.resource_id in (focus_line_items.ResourceId, focus_line_items.ResourceName)
    group by running_nodes.resource_id
),

-- a running job on a host no map names ends with its cluster's newest billed hour
cluster_ends as (
    select mapped.cluster, max(billed_ends.billed_end) as billed_end
    from mapped
    inner join billed_ends on mapped.resource_id = billed_ends.resource_id
    group by mapped.cluster
),

final as (
    select
        mapped.source_name as source,
        mapped.cluster,
        mapped.node,
        mapped.resource_id,
        mapped.job_id,
        mapped.training_run,
        mapped.experiment,
        mapped.dataset_version,
        mapped.owner,
        mapped.custom_dimensions,
        mapped.interval_start as start,
        coalesce(
            mapped.interval_end,
            greatest(coalesce(billed_ends.billed_end, cluster_ends.billed_end), mapped.interval_start)
        ) as "end",
        mapped.interval_end is null as running,
        mapped.gpus,
        mapped.cpus
    from mapped
    left join billed_ends on mapped.resource_id = billed_ends.resource_id
    left join cluster_ends on mapped.cluster = cluster_ends.cluster
)

select * from final;

-- name: comments
-- What the view and each column hold (read into DuckDB's catalog, the Dagster column schemas and
-- docs/warehouse.md).
comment on view cluster_usage is
    'The usage intervals of every scheduler source (Slurm, Kubernetes): one row per (job run, node), a job''s '
    'GPUs on one node over [start, end). Attribution splits a node''s bill lines among the intervals '
    'overlapping them by GPU-seconds; what no interval held is the cluster''s idle capacity.';
comment on column cluster_usage.source is 'The scheduler source the interval was read from.';
comment on column cluster_usage.cluster is 'The cluster (the source''s `cluster:`).';
comment on column cluster_usage.node is 'The host as the scheduler names it.';
comment on column cluster_usage.resource_id is
    'The node''s cloud resource over the interval (as focus_line_items.ResourceId, or ResourceName, names it): the '
    'scheduler''s own, else the node map''s; NULL when no map names the host (its share of the node stays idle).';
comment on column cluster_usage.job_id is
    'The scheduler''s job id (Slurm job id, the same for every run of a requeued job; Kubernetes namespace/pod).';
comment on column cluster_usage.training_run is
    'The training run the job names (its comment, name or labels); NULL when none.';
comment on column cluster_usage.experiment is 'The experiment the job names; NULL when none.';
comment on column cluster_usage.dataset_version is 'The dataset version the job names; NULL when none.';
comment on column cluster_usage.owner is 'The owner the job names; NULL when none.';
comment on column cluster_usage.custom_dimensions is
    'The job''s values of the custom attribution dimensions, by dimension name.';
comment on column cluster_usage.start is 'When the job got the node, UTC.';
comment on column cluster_usage."end" is
    'When the job released the node, UTC; for a running job the end of its node''s newest billed hour.';
comment on column cluster_usage.running is 'Whether the job was still running when the scheduler was read.';
comment on column cluster_usage.gpus is
    'GPUs the job held on this node: its allocated GPUs divided evenly over its nodes (may be fractional).';
comment on column cluster_usage.cpus is 'CPUs the job held on this node, where the scheduler says.';
