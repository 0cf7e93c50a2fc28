-- Splits the line items of one billing period by their integer shares in `allocation_shares`
-- (attribution steps 1, 2, 3 and 5 from sql/attribution/shares.sql, then step 4 from
-- sql/attribution/shared_shares.sql) and appends the parts to cost_allocations.
-- Every line's parts are split in units of 1e-10 by largest remainder, so ratios sum to exactly 1
-- and billed, effective cost and GPU-hours to exactly the line's.
-- experiment, dataset_version and owner of a part: a cluster part's, those its job names (else
-- its run's registry entry); else the line's own tags, else its resource tag
-- snapshot (unless the snapshot names another run), else the registry entry of the part's run;
-- each custom dimension (custom_dimensions) likewise from the tags, else the snapshot. A
-- shared part describes its run, not the shared line: `run_dimensions` of the period
-- (sql/schema/macros.sql: the registry entry, else the value carrying most of the run's step 1-3
-- effective cost in the period, ties by value).
insert into cost_allocations by name
-- shares and line_items are read twice; scanning them again costs less than DuckDB keeping a
-- period's 10M rows of each as materialized CTEs
with shares as not materialized (
    select * from allocation_shares
    where share > 0
),

line_items as not materialized (
    select
        rowid as line_row,
        x_LineItemKey,
        x_SourceName,
        BillingPeriodStart,
        BillingCurrency,
        ChargePeriodStart,
        ChargePeriodEnd,
        ProviderName,
        SubAccountId,
        ServiceName,
        x_CostCategory,
        ResourceId,
        coalesce(BilledCost, 0) as billed_cost,
        coalesce(EffectiveCost, 0) as effective_cost,
        coalesce(x_GpuHours, 0) as gpu_hours
    from focus_line_items
    where in_billing_period(BillingPeriodStart, $billing_period)
),

-- only the lines being split: the second pass splits the few lines shared-cost rules took
dimensions as (
    select line_dimensions.*
    from line_dimensions
    semi join shares on line_dimensions.line_row = shares.line_row
),

registry as (
    select * from run_registry
),

-- the cluster step's parts (sql/attribution/cluster_shares.sql), named by part_id
cluster_parts as (
    select part_id, cluster, job_id, experiment, dataset_version, owner, custom_dimensions
    from cluster_shares
),

-- weighed by the steps 1-3 allocations of the period: step 4's own are being written
shared_run_dimensions as (
    select * from run_dimensions($billing_period, ['tag', 'cluster', 'resource_tags', 'registry'])
),

-- a line with one part keeps its amounts as they are (taken in final); only lines with several
-- parts are split here
whole_parts as (
    select
        line_row,
        training_run,
        allocation_method,
        allocation_rule,
        part_id,
        true as whole_line,
        cast(1 as decimal(38, 10)) as allocation_ratio,
        cast(null as decimal(38, 10)) as billed_cost,
        cast(null as decimal(38, 10)) as effective_cost,
        cast(null as decimal(38, 10)) as gpu_hours
    from shares
    where share = total_share
),

parts as (
    select
        shares.*,
        units(1) as ratio_units,
        units(line_items.billed_cost) as billed_units,
        units(line_items.effective_cost) as effective_units,
        units(line_items.gpu_hours) as gpu_units
    from shares
    inner join line_items on shares.line_row = line_items.line_row
    where shares.share < shares.total_share
),

floored as (
    select
        *,
        ratio_units * share // total_share as ratio_floor,
        ratio_units * share % total_share as ratio_remainder,
        abs(billed_units) * share // total_share as billed_floor,
        abs(billed_units) * share % total_share as billed_remainder,
        abs(effective_units) * share // total_share as effective_floor,
        abs(effective_units) * share % total_share as effective_remainder,
        abs(gpu_units) * share // total_share as gpu_floor,
        abs(gpu_units) * share % total_share as gpu_remainder
    from parts
),

-- largest remainder: the units left after flooring go one each to the parts with the largest
-- remainders (ties: attributed targets before unattributed, then by run id)
ranked as (
    select
        *,
        ratio_units - sum(ratio_floor) over line_parts as ratio_left,
        row_number() over (partition by line_row order by ratio_remainder desc, training_run nulls last)
            as ratio_rank,
        abs(billed_units) - sum(billed_floor) over line_parts as billed_left,
        row_number() over (partition by line_row order by billed_remainder desc, training_run nulls last)
            as billed_rank,
        abs(effective_units) - sum(effective_floor) over line_parts as effective_left,
        row_number() over (partition by line_row order by effective_remainder desc, training_run nulls last)
            as effective_rank,
        abs(gpu_units) - sum(gpu_floor) over line_parts as gpu_left,
        row_number() over (partition by line_row order by gpu_remainder desc, training_run nulls last)
            as gpu_rank
    from floored
    window line_parts as (partition by line_row)
),

split_parts as (
    select
        line_row,
        training_run,
        allocation_method,
        allocation_rule,
        part_id,
        ratio_floor + case when ratio_rank <= ratio_left then 1 else 0 end as ratio_part,
        sign(billed_units) * (billed_floor + case when billed_rank <= billed_left then 1 else 0 end) as billed_part,
        sign(effective_units) * (effective_floor + case when effective_rank <= effective_left then 1 else 0 end)
            as effective_part,
        sign(gpu_units) * (gpu_floor + case when gpu_rank <= gpu_left then 1 else 0 end) as gpu_part
    from ranked
),

allocated as (
    select * from whole_parts

    union all

    select
        line_row,
        training_run,
        allocation_method,
        allocation_rule,
        part_id,
        false as whole_line,
        from_units(ratio_part) as allocation_ratio,
        from_units(billed_part) as billed_cost,
        from_units(effective_part) as effective_cost,
        from_units(gpu_part) as gpu_hours
    from split_parts
),

line_parts as (
    select
        allocated.training_run,
        allocated.allocation_method,
        allocated.allocation_rule,
        coalesce(cluster_parts.cluster, dimensions.gke_cluster) as cluster,
        cluster_parts.job_id,
        cluster_parts.part_id is not null and allocated.allocation_method <> 'idle_capacity' as part_dimensions,
        cluster_parts.experiment as part_experiment,
        cluster_parts.dataset_version as part_dataset_version,
        cluster_parts.owner as part_owner,
        cluster_parts.custom_dimensions as part_custom_dimensions,
        allocated.allocation_ratio,
        case when allocated.whole_line then line_items.billed_cost else allocated.billed_cost end
            as billed_cost,
        case when allocated.whole_line then line_items.effective_cost else allocated.effective_cost end
            as effective_cost,
        case when allocated.whole_line then line_items.gpu_hours else allocated.gpu_hours end
            as gpu_hours,
        line_items.* exclude (line_row, billed_cost, effective_cost, gpu_hours),
        dimensions.tag_experiment,
        dimensions.tag_dataset_version,
        dimensions.tag_owner,
        dimensions.tag_custom_dimensions,
        dimensions.snapshot_custom_dimensions,
        dimensions.snapshot_experiment,
        dimensions.snapshot_dataset_version,
        dimensions.snapshot_owner,
        dimensions.snapshot_training_run is null
            or dimensions.snapshot_training_run = allocated.training_run as snapshot_applies
    from allocated
    inner join line_items on allocated.line_row = line_items.line_row
    left join dimensions on allocated.line_row = dimensions.line_row
    left join cluster_parts on allocated.part_id = cluster_parts.part_id
),

final as (
    select
        line_parts.x_LineItemKey,
        line_parts.x_SourceName,
        line_parts.BillingPeriodStart,
        line_parts.BillingCurrency,
        line_parts.ChargePeriodStart,
        line_parts.ChargePeriodEnd,
        line_parts.ProviderName,
        line_parts.SubAccountId,
        line_parts.ServiceName,
        line_parts.x_CostCategory,
        line_parts.ResourceId,
        line_parts.training_run,
        case
            when line_parts.part_dimensions then coalesce(line_parts.part_experiment, registry.experiment)
            when line_parts.allocation_method = 'shared'
                then shared_run_dimensions.experiment
            else coalesce(
                line_parts.tag_experiment,
                case when line_parts.snapshot_applies then line_parts.snapshot_experiment end,
                registry.experiment
            )
        end as experiment,
        case
            when line_parts.part_dimensions then coalesce(line_parts.part_dataset_version, registry.dataset_version)
            when line_parts.allocation_method = 'shared'
                then shared_run_dimensions.dataset_version
            else coalesce(
                line_parts.tag_dataset_version,
                case when line_parts.snapshot_applies then line_parts.snapshot_dataset_version end,
                registry.dataset_version
            )
        end as dataset_version,
        case
            when line_parts.part_dimensions then coalesce(line_parts.part_owner, registry.owner)
            when line_parts.allocation_method = 'shared'
                then shared_run_dimensions.owner
            else coalesce(
                line_parts.tag_owner,
                case when line_parts.snapshot_applies then line_parts.snapshot_owner end,
                registry.owner
            )
        end as owner,
        case
            when line_parts.part_dimensions then coalesce(line_parts.part_custom_dimensions, map())
            when line_parts.allocation_method = 'shared'
                then coalesce(shared_run_dimensions.custom_dimensions, map())
            -- the tags' entries replace the snapshot's
            else map_concat(
                coalesce(case when line_parts.snapshot_applies then line_parts.snapshot_custom_dimensions end, map()),
                coalesce(line_parts.tag_custom_dimensions, map())
            )
        end as custom_dimensions,
        line_parts.allocation_method,
        line_parts.allocation_rule,
        line_parts.cluster,
        line_parts.job_id,
        line_parts.allocation_ratio,
        line_parts.billed_cost,
        line_parts.effective_cost,
        line_parts.gpu_hours
    from line_parts
    left join registry on line_parts.training_run = registry.training_run
    left join shared_run_dimensions on line_parts.training_run = shared_run_dimensions.training_run
)

select * from final
