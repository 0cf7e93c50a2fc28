-- Attribution's `cluster` step for one billing period (this connection only): the lines of a
-- shared cluster's nodes split among the jobs that held them, the rest the cluster's idle capacity.

-- name: node_line_usage
-- Each line of a cluster node's resource (cluster_node_resources() valid at its charge time, or a
-- resource an interval of cluster_usage names; matched on the line's ResourceId, else its
-- ResourceName: a GKE node's provider id names its instance, GCP's export its numeric id) with
-- each job holding the node over its charge period: held = the job's GPUs (in 1e-6 GPU) × the
-- seconds its intervals overlap the line, capacity = the node's GPUs × the line's seconds. On a
-- node without GPUs (its listed GPUs, else its instance type's x_GpuCount, is 0) both count CPUs
-- instead, capacity NULL when the source gives none. A line at one instant (no duration) counts as
-- one second at its start. A line no job held has one row with job_id NULL and held 0.
create or replace temp table node_line_usage as
with usage as (
    select * from cluster_usage
    where resource_id is not null
),

nodes as (
    select * from cluster_node_resources()
    union all
    select distinct
        source as source_name,
        cluster,
        node,
        resource_id,
        cast(null as timestamp) as valid_from,
        cast(null as timestamp) as valid_to,
        cast(null as decimal(38, 10)) as gpus,
        cast(null as decimal(38, 10)) as cpus
    from usage
),

line_items as (
    select
        rowid as line_row,
        ResourceId as line_resource_id,
        ResourceName as line_resource_name,
        ChargePeriodStart,
        coalesce(ChargePeriodEnd, ChargePeriodStart) as charge_end,
        -- the end an interval must start before to overlap the line (an instant: its start)
        case
            when ChargePeriodEnd > ChargePeriodStart then ChargePeriodEnd
            else ChargePeriodStart + interval 1 microsecond
        end as charge_until,
        greatest(date_diff('second', ChargePeriodStart, coalesce(ChargePeriodEnd, ChargePeriodStart)), 1)
            as duration_seconds,
        coalesce(x_GpuCount, 0) as line_gpus
    from focus_line_items
    where in_billing_period(BillingPeriodStart, $billing_period)
        and (ResourceId in (select resource_id from nodes) or ResourceName in (select resource_id from nodes))
),

-- a line of a resource two maps name takes the entry valid at its start, the latest starting first
node_lines as (
    select
        line_items.*,
        nodes.resource_id as ResourceId,
        nodes.cluster,
        nodes.gpus as listed_gpus,
        nodes.cpus as listed_cpus
    from line_items
    inner join nodes
        on nodes.resource_id in (line_items.line_resource_id, line_items.line_resource_name)
        and (nodes.valid_from is null or line_items.ChargePeriodStart >= nodes.valid_from)
        and (nodes.valid_to is null or line_items.ChargePeriodStart < nodes.valid_to)
    qualify row_number() over (
        partition by line_items.line_row
        order by nodes.valid_from desc nulls last, nodes.gpus desc nulls last, nodes.cluster
    ) = 1
),

capacities as (
    select
        *,
        coalesce(listed_gpus, max(line_gpus) over (partition by ResourceId)) as node_gpus
    from node_lines
),

held_lines as (
    select
        capacities.line_row,
        usage.job_id,
        usage.training_run,
        any_value(usage.experiment) as experiment,
        any_value(usage.dataset_version) as dataset_version,
        any_value(usage.owner) as owner,
        any_value(usage.custom_dimensions) as custom_dimensions,
        sum(
            cast(
                round(case when capacities.node_gpus > 0 then usage.gpus else coalesce(usage.cpus, 0) end * 1000000)
                as hugeint
            )
            * case
                when capacities.ChargePeriodStart = capacities.charge_end then 1
                else date_diff(
                    'second',
                    greatest(capacities.ChargePeriodStart, usage.start),
                    least(capacities.charge_end, usage."end")
                )
            end
        ) as held
    from capacities
    inner join usage
        on capacities.ResourceId = usage.resource_id
        and usage.start < capacities.charge_until
        and usage."end" > capacities.ChargePeriodStart
    group by capacities.line_row, usage.job_id, usage.training_run
),

final as (
    select
        capacities.line_row,
        capacities.cluster,
        capacities.ResourceId,
        capacities.ChargePeriodStart,
        case when capacities.node_gpus > 0 then 'gpu' else 'cpu' end as counted,
        case
            when capacities.node_gpus > 0
                then cast(round(capacities.node_gpus * 1000000) as hugeint) * capacities.duration_seconds
            else cast(round(capacities.listed_cpus * 1000000) as hugeint) * capacities.duration_seconds
        end as capacity,
        held_lines.job_id,
        held_lines.training_run,
        held_lines.experiment,
        held_lines.dataset_version,
        held_lines.owner,
        held_lines.custom_dimensions,
        coalesce(held_lines.held, 0) as held
    from capacities
    left join held_lines on capacities.line_row = held_lines.line_row and held_lines.held > 0
)

select * from final;

-- name: split_line_usage
-- AWS split cost allocation data (EKS, ECS): each line of a parent instance in an hour its pods
-- have split rows of (x_SplitParentResourceId, the same ChargePeriodStart), with each pod: held =
-- the pod's split cost over its rows, capacity = the split and unused cost of all the hour's pods
-- (both in 1e-10), counted `split_cost`. The pod's run and dimensions are its rows' own tags
-- (line_dimensions), the cluster its `aws:eks:cluster-name` tag; the pod rows themselves are lines
-- like any other.
insert into node_line_usage by name
with pod_rows as (
    select
        rowid as pod_row,
        x_SplitParentResourceId as parent_id,
        ChargePeriodStart,
        ResourceId as pod_id,
        list_filter(map_entries(Tags), entry -> normalize_tag_key(entry.key) = 'aws_eks_cluster_name')[1].value
            as cluster_tag,
        units(coalesce(x_SplitCost, 0)) as split_units,
        units(coalesce(x_SplitUnusedCost, 0)) as unused_units
    from focus_line_items
    where in_billing_period(BillingPeriodStart, $billing_period) and x_SplitParentResourceId is not null
),

pods as (
    select
        pod_rows.parent_id,
        pod_rows.ChargePeriodStart,
        pod_rows.pod_id,
        any_value(pod_rows.cluster_tag) as cluster_tag,
        any_value(coalesce(dimensions.tag_training_run, dimensions.snapshot_training_run)) as training_run,
        any_value(coalesce(dimensions.tag_experiment, dimensions.snapshot_experiment)) as experiment,
        any_value(coalesce(dimensions.tag_dataset_version, dimensions.snapshot_dataset_version)) as dataset_version,
        any_value(coalesce(dimensions.tag_owner, dimensions.snapshot_owner)) as owner,
        any_value(dimensions.tag_custom_dimensions) as custom_dimensions,
        sum(pod_rows.split_units) as split_units,
        sum(pod_rows.unused_units) as unused_units
    from pod_rows
    left join line_dimensions as dimensions on pod_rows.pod_row = dimensions.line_row
    group by pod_rows.parent_id, pod_rows.ChargePeriodStart, pod_rows.pod_id
),

parent_hours as (
    select
        parent_id,
        ChargePeriodStart,
        coalesce(max(cluster_tag), 'eks') as cluster,
        sum(split_units + unused_units) as capacity
    from pods
    group by parent_id, ChargePeriodStart
),

parent_lines as (
    select rowid as line_row, ResourceId, ChargePeriodStart
    from focus_line_items
    where in_billing_period(BillingPeriodStart, $billing_period)
        and x_SplitParentResourceId is null
        and ResourceId in (select parent_id from pod_rows)
),

final as (
    select
        parent_lines.line_row,
        parent_hours.cluster,
        parent_lines.ResourceId,
        parent_lines.ChargePeriodStart,
        'split_cost' as counted,
        parent_hours.capacity,
        pods.pod_id as job_id,
        pods.training_run,
        pods.experiment,
        pods.dataset_version,
        pods.owner,
        pods.custom_dimensions,
        pods.split_units as held
    from parent_lines
    inner join parent_hours
        on parent_lines.ResourceId = parent_hours.parent_id
        and parent_lines.ChargePeriodStart = parent_hours.ChargePeriodStart
    inner join pods
        on parent_hours.parent_id = pods.parent_id
        and parent_hours.ChargePeriodStart = pods.ChargePeriodStart
)

select * from final;

-- name: any_split
-- Whether the period has split cost allocation data (pod rows with a parent).
select count(*) > 0 as any_split
from focus_line_items
where in_billing_period(BillingPeriodStart, $billing_period) and x_SplitParentResourceId is not null;

-- name: shares
-- The integer shares of the cluster step (this connection only), one row per (node line, target):
--   cluster: a job's share of the line, its held GPU-seconds (node_line_usage), carrying the job's
--     dimensions and job id;
--   idle_capacity (rule `unallocated`): the capacity no job held. Jobs holding more than the node
--     has are scaled down to its capacity (the line is then theirs alone);
--   with `attribution.idle_capacity.share: proportional` ($share_idle), a line's idle part goes
--     instead to the runs that held the cluster that day (UTC, the line's charge start), by the
--     GPU-seconds they held on its billed node-hours (each node-hour counted once, to 1e-4
--     GPU-hour; split cost allocation data's runs by their split cost), as `shared` parts with
--     rule `idle <cluster>`; a day no run held stays idle.
create or replace temp table cluster_shares as
with usage as (
    select * from node_line_usage
),

lines as (
    select
        line_row,
        any_value(cluster) as cluster,
        cast(any_value(ChargePeriodStart) as date) as charge_day,
        any_value(capacity) as capacity,
        sum(held) as held_total
    from usage
    group by line_row
),

totals as (
    select
        *,
        greatest(coalesce(capacity, held_total), held_total, 1) as total_share
    from lines
),

-- each run's GPU-seconds on the cluster per day, a node-hour's several lines counted once
node_hours as (
    select
        cluster,
        cast(ChargePeriodStart as date) as charge_day,
        training_run,
        any_value(experiment) as experiment,
        any_value(dataset_version) as dataset_version,
        any_value(owner) as owner,
        any_value(custom_dimensions) as custom_dimensions,
        max(held) as held
    from usage
    where training_run is not null and held > 0
    group by cluster, ResourceId, ChargePeriodStart, job_id, training_run
),

day_weights as (
    select
        cluster,
        charge_day,
        training_run,
        max(experiment) as experiment,
        max(dataset_version) as dataset_version,
        max(owner) as owner,
        any_value(custom_dimensions) as custom_dimensions,
        -- held counts 1e-6 GPU-seconds: 360,000 of them are 1e-4 GPU-hour (rounded half up)
        (sum(held) + 180000) // 360000 as weight
    from node_hours
    group by cluster, charge_day, training_run
    having weight > 0
),

day_totals as (
    select cluster, charge_day, sum(weight) as total_weight
    from day_weights
    where $share_idle
    group by cluster, charge_day
),

scaled as (
    select
        totals.*,
        coalesce(day_totals.total_weight, 1) as scale,
        day_totals.total_weight is not null and totals.total_share > totals.held_total as idle_shared
    from totals
    left join day_totals on totals.cluster = day_totals.cluster and totals.charge_day = day_totals.charge_day
),

final as (
    select
        usage.line_row,
        usage.cluster,
        usage.job_id,
        usage.training_run,
        usage.experiment,
        usage.dataset_version,
        usage.owner,
        usage.custom_dimensions,
        'cluster' as allocation_method,
        'cluster ' || usage.cluster as allocation_rule,
        usage.held * scaled.scale as share,
        scaled.total_share * scaled.scale as total_share
    from usage
    inner join scaled on usage.line_row = scaled.line_row
    where usage.held > 0

    union all

    select
        line_row,
        cluster,
        null as job_id,
        null as training_run,
        null as experiment,
        null as dataset_version,
        null as owner,
        null as custom_dimensions,
        'idle_capacity' as allocation_method,
        'unallocated' as allocation_rule,
        (total_share - held_total) * scale as share,
        total_share * scale as total_share
    from scaled
    where total_share > held_total and not idle_shared

    union all

    select
        scaled.line_row,
        scaled.cluster,
        null as job_id,
        day_weights.training_run,
        day_weights.experiment,
        day_weights.dataset_version,
        day_weights.owner,
        day_weights.custom_dimensions,
        'shared' as allocation_method,
        'idle ' || scaled.cluster as allocation_rule,
        (scaled.total_share - scaled.held_total) * day_weights.weight as share,
        scaled.total_share * scaled.scale as total_share
    from scaled
    inner join day_weights on scaled.cluster = day_weights.cluster and scaled.charge_day = day_weights.charge_day
    where scaled.idle_shared
)

-- part_id: what an allocation of the part names (sql/attribution/cost_allocations_insert.sql)
select
    *,
    row_number() over () as part_id
from final;

-- name: over_capacity
-- The node lines whose jobs held more than the node has (scaled down to its capacity by the
-- cluster step): cluster, node resource, charge start, GPUs (or CPUs) held on average over the
-- line and the node's.
with usage as (
    select * from node_line_usage
),

final as (
    select
        cluster,
        ResourceId as resource_id,
        ChargePeriodStart as charge_start,
        counted,
        round(sum(held) / any_value(capacity), 4) as load,
        count(distinct job_id) as jobs
    from usage
    group by line_row, cluster, ResourceId, ChargePeriodStart, counted
    having sum(held) > any_value(capacity)
)

select * from final
order by cluster, resource_id, charge_start;

-- name: any_cluster
-- Whether any scheduler source gave intervals, nodes or a node tag (else the step is skipped).
select
    exists (select 1 from cluster_intervals)
    or exists (select 1 from cluster_nodes)
    or exists (select 1 from cluster_node_tags) as any_cluster;

-- name: none
-- The cluster step's shares when no scheduler source gave anything (the columns `shares` writes).
create or replace temp table cluster_shares (
    line_row bigint,
    cluster varchar,
    job_id varchar,
    training_run varchar,
    experiment varchar,
    dataset_version varchar,
    owner varchar,
    custom_dimensions map(varchar, varchar),
    allocation_method varchar,
    allocation_rule varchar,
    share hugeint,
    total_share hugeint,
    part_id bigint
);
