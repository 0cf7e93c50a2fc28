-- What the scheduler sources (`kind: slurm`, `kind: kubernetes`) read: the jobs' usage intervals,
-- the nodes they name and the tag that names a node's host, replaced whole on every run by the
-- `cluster_usage` asset. The public view `cluster_usage` (sql/marts/cluster_usage.sql) resolves
-- hosts to cloud resources and ends running jobs.
create table if not exists cluster_intervals (
    source_name varchar not null,
    cluster varchar not null,
    node varchar not null,
    resource_id varchar,                 -- where the scheduler names the node's resource itself
    job_id varchar not null,
    training_run varchar,
    experiment varchar,
    dataset_version varchar,
    owner varchar,
    custom_dimensions map(varchar, varchar),
    interval_start timestamp not null,   -- UTC
    interval_end timestamp,              -- UTC; NULL while the job runs
    gpus decimal(38, 10) not null,
    cpus decimal(38, 10)
);

create table if not exists cluster_nodes (
    source_name varchar not null,
    cluster varchar not null,
    node varchar not null,
    resource_id varchar not null,
    valid_from timestamp,
    valid_to timestamp,
    gpus decimal(38, 10),
    cpus decimal(38, 10)
);

create table if not exists cluster_node_tags (
    source_name varchar not null,
    cluster varchar not null,
    tag_key varchar not null
);

-- What the table and each column hold (read into DuckDB's catalog, the Dagster column schemas and
-- docs/warehouse.md).
comment on table cluster_intervals is
    'Bookkeeping: the usage intervals every scheduler source (slurm, kubernetes) read, one row per (job run, '
    'node), replaced whole on every run; query cluster_usage, which maps hosts to cloud resources and ends '
    'running jobs.';
comment on column cluster_intervals.source_name is 'The scheduler source the interval was read from.';
comment on column cluster_intervals.cluster is 'The source''s cluster name.';
comment on column cluster_intervals.node is 'The host as the scheduler names it.';
comment on column cluster_intervals.resource_id is
    'The node''s cloud resource where the scheduler names it (a Kubernetes node''s provider id); else NULL.';
comment on column cluster_intervals.job_id is 'The scheduler''s job id (Slurm job id; Kubernetes namespace/pod).';
comment on column cluster_intervals.training_run is 'The training run the job names; NULL when it names none.';
comment on column cluster_intervals.experiment is 'The experiment the job names.';
comment on column cluster_intervals.dataset_version is 'The dataset version the job names.';
comment on column cluster_intervals.owner is 'The owner the job names.';
comment on column cluster_intervals.custom_dimensions is 'The custom attribution dimensions the job names.';
comment on column cluster_intervals.interval_start is 'When the job got the node, UTC.';
comment on column cluster_intervals.interval_end is 'When the job released the node, UTC; NULL while it runs.';
comment on column cluster_intervals.gpus is 'GPUs the job held on the node (its GPUs divided evenly over its nodes).';
comment on column cluster_intervals.cpus is 'CPUs the job held on the node, where the scheduler says.';

comment on table cluster_nodes is
    'Bookkeeping: each scheduler source''s nodes and their cloud resources (a Slurm node map, the nodes a '
    'Kubernetes source saw), replaced whole on every run.';
comment on column cluster_nodes.source_name is 'The scheduler source.';
comment on column cluster_nodes.cluster is 'The source''s cluster name.';
comment on column cluster_nodes.node is 'The host as the scheduler names it.';
comment on column cluster_nodes.resource_id is 'The node''s cloud resource id, as the bill''s ResourceId names it.';
comment on column cluster_nodes.valid_from is 'Start of the mapping''s validity, UTC; NULL: always.';
comment on column cluster_nodes.valid_to is 'End of the mapping''s validity (exclusive), UTC; NULL: always.';
comment on column cluster_nodes.gpus is
    'GPUs of the node where the source says; NULL: the GPUs of its instance type (focus_line_items.x_GpuCount).';
comment on column cluster_nodes.cpus is 'CPUs of the node where the source says.';

comment on table cluster_node_tags is
    'Bookkeeping: the resource tag whose value names a node''s host, per scheduler source with '
    '`nodes: {tag: KEY}` (resolved through resource_tag_snapshots).';
comment on column cluster_node_tags.source_name is 'The scheduler source.';
comment on column cluster_node_tags.cluster is 'The source''s cluster name.';
comment on column cluster_node_tags.tag_key is 'The resource tag key whose value is the host name.';
