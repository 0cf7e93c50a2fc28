-- gpu_utilization_runs: each GPU-hour of gpu_utilization with the training run that held the GPU
-- (a view).

-- name: create
-- A GPU-hour's run: the run its source names (MLflow); else the run attribution gave its cloud
-- resource's GPU-hours in that hour (by tag, cluster share, registry or tag snapshot, the same
-- order as the bill) — of a shared node's several runs the one whose job the exporter names. Its
-- resource: the series' own, else its host through the clusters' node maps
-- (cluster_node_resources(), sql/schema/macros.sql). A GPU-hour of no run keeps training_run NULL
-- and says why in unattributed_reason; the run_utilization asset's check counts them.
create or replace view gpu_utilization_runs as
with gpu_hours as (
    select
        *,
        row_number() over (order by source_name, gpu, hour, job_id, series) as gpu_hour_id
    from gpu_utilization
),

nodes as (
    select node, resource_id, valid_from, valid_to from cluster_node_resources()
),

located as (
    select
        gpu_hours.* exclude (resource_id),
        coalesce(gpu_hours.resource_id, nodes.resource_id) as resource_id
    from gpu_hours
    left join nodes
        on gpu_hours.resource_id is null
        and gpu_hours.host = nodes.node
        and (nodes.valid_from is null or nodes.valid_from <= gpu_hours.hour)
        and (nodes.valid_to is null or gpu_hours.hour < nodes.valid_to)
    qualify row_number() over (partition by gpu_hours.gpu_hour_id order by nodes.resource_id) = 1
),

resource_hours as (
    select distinct resource_id, hour
    from located
    where training_run is null and resource_id is not null
),

-- the runs attribution gave each resource's GPU-hours of the hour; a GKE node's lines name it
-- by ResourceName
allocated as (
    select
        resource_hours.resource_id,
        resource_hours.hour,
        allocations.training_run,
        allocations.job_id
    from resource_hours
    inner join cost_allocations as allocations
        on resource_hours.resource_id = allocations.ResourceId
        and allocations.ChargePeriodStart <= resource_hours.hour
        and resource_hours.hour < allocations.ChargePeriodEnd
    where allocations.training_run is not null and allocations.gpu_hours > 0
    union
    select
        named_lines.resource_id,
        named_lines.hour,
        allocations.training_run,
        allocations.job_id
    from (
        select resource_hours.resource_id, resource_hours.hour, line_items.x_LineItemKey
        from resource_hours
        inner join focus_line_items as line_items
            on resource_hours.resource_id = line_items.ResourceName
            and line_items.ChargePeriodStart <= resource_hours.hour
            and resource_hours.hour < line_items.ChargePeriodEnd
    ) as named_lines
    inner join cost_allocations as allocations on named_lines.x_LineItemKey = allocations.x_LineItemKey
    where allocations.training_run is not null and allocations.gpu_hours > 0
),

hour_runs as (
    select
        resource_id,
        hour,
        count(distinct training_run) as runs,
        any_value(training_run) as only_run
    from allocated
    group by resource_id, hour
),

job_runs as (
    select distinct resource_id, hour, job_id, training_run
    from allocated
    where job_id is not null
),

final as (
    select
        located.source_name,
        located.series,
        located.gpu,
        located.hour,
        located.samples,
        located.utilization_sum,
        located.host,
        located.resource_id,
        located.job_id,
        coalesce(located.training_run, job_runs.training_run, if(hour_runs.runs = 1, hour_runs.only_run, null))
            as training_run,
        case
            when coalesce(located.training_run, job_runs.training_run) is not null or hour_runs.runs = 1 then null
            when located.resource_id is null then 'no resource'
            when hour_runs.runs is null then 'no run'
            else 'several runs'
        end as unattributed_reason
    from located
    left join job_runs
        on located.training_run is null
        and located.resource_id = job_runs.resource_id
        and located.hour = job_runs.hour
        and located.job_id = job_runs.job_id
    left join hour_runs
        on located.training_run is null
        and located.resource_id = hour_runs.resource_id
        and located.hour = hour_runs.hour
)

select * from final;

-- name: comments
-- What the view and each column hold (read into DuckDB's catalog, the Dagster column schemas and
-- docs/warehouse.md).
comment on view gpu_utilization_runs is
    'Each GPU-hour of gpu_utilization with the training run that held the GPU: the run its source names (MLflow), '
    'else the run attribution gave its cloud resource''s GPU-hours in that hour (by tag, cluster share, registry '
    'or tag snapshot), of a shared node''s several runs the one whose job the exporter names. Telemetry never '
    'changes cost.';
comment on column gpu_utilization_runs.source_name is 'The source the samples were read from.';
comment on column gpu_utilization_runs.series is 'The series as PromQL writes it, or the MLflow run and metric.';
comment on column gpu_utilization_runs.gpu is 'The GPU: its UUID, else its host and index, or the MLflow GPU.';
comment on column gpu_utilization_runs.hour is 'The start of the UTC hour.';
comment on column gpu_utilization_runs.samples is 'The samples of the GPU in the hour.';
comment on column gpu_utilization_runs.utilization_sum is 'The sum of the samples (each 0 to 1).';
comment on column gpu_utilization_runs.host is 'The host the series names; NULL where none.';
comment on column gpu_utilization_runs.resource_id is
    'The GPU''s cloud resource: the series'' own, else its host through a node map; NULL where none names it.';
comment on column gpu_utilization_runs.job_id is 'The job the exporter says holds the GPU, where it says so.';
comment on column gpu_utilization_runs.training_run is 'The run that held the GPU in the hour; NULL where none.';
comment on column gpu_utilization_runs.unattributed_reason is
    'Why the GPU-hour has no run: `no resource` (no label or node map names its host''s cloud resource), `no run` '
    '(attribution gave the resource''s hour to no run, or it is not billed yet), `several runs` (a shared node''s '
    'hour held by several runs, and the series names no job); NULL when it has one.';
