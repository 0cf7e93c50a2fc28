-- Integer shares of each line item of one billing period for attribution steps 1, 2, 3 and 5 and
-- the cluster step (this connection only): one row per (line, target), the parts of a line summing
-- to total_share.
-- Shares are integers (HUGEINT; seconds, weights in units of 1e-10 divided by the greatest common
-- divisor of the registry's weights, so 0.00001 beside 1 counts 1 against 100000): no floating
-- point and no rounding anywhere in a split.
--   1. tag: the line's own tags name the run;
--   cluster: a line of a shared cluster's node, split among the jobs that held it and its idle
--      capacity (sql/attribution/cluster_shares.sql, `cluster_shares`), and GKE cost allocation's
--      buckets of unallocated and system overhead capacity (`idle_capacity`, rules `unallocated`
--      and `system overhead`), which are the cluster's, never unattributed. A cluster part names
--      its row of `cluster_shares` (part_id: its cluster, job and the job's dimensions);
--   2. resource_tags: the snapshot valid at the line's charge time names it (line_dimensions);
--   3. registry: lines whose ResourceId matches a registered run's glob within its window
--      [start, end). A storage line (x_CostCategory storage) is the run's from its window's end
--      too, until the next window of a run matching the same resource starts: its registered
--      storage outliving the run stays the run's (rule `registry after window`). A run's share
--      of a line is weight × its held seconds (in its window, plus after it for storage); the
--      line's covered fraction is (its longest hold in a window + its longest hold after one,
--      at most its duration) ÷ its duration, the rest stays unattributed (a line crossing a
--      window edge is split). Several matching runs split the covered part by weight × held
--      seconds. A line matching a run's globs entirely outside what it holds is
--      unattributed too: both carry the rule `outside registry window` and are never shared by
--      step 4 (the run's idle resources);
--   5. unattributed, rule NULL: a line no step claimed; step 4 may still share it.
create or replace temp table allocation_shares as
with line_items as (
    select
        rowid as line_row,
        ResourceId,
        x_CostCategory = 'storage' as is_storage,
        ChargePeriodStart,
        coalesce(ChargePeriodEnd, ChargePeriodStart) as charge_end,
        greatest(date_diff('second', ChargePeriodStart, coalesce(ChargePeriodEnd, ChargePeriodStart)), 0)
            as duration_seconds
    from focus_line_items
    where in_billing_period(BillingPeriodStart, $billing_period)
),

dimensions as (
    select * from line_dimensions
),

-- weights have at most 10 decimal places (pipelines/config.py, Weight): exact integers here
registry_weights as (
    select
        *,
        units(weight) as weight_scaled
    from run_registry
),

weight_unit as (
    select list_reduce(list(weight_scaled), (a, b) -> gcd(a, b)) as scaled_gcd
    from registry_weights
),

registry_patterns as (
    select
        registry_weights.training_run,
        registry_weights.window_start,
        registry_weights.window_end,
        registry_weights.weight_scaled // weight_unit.scaled_gcd as weight_units,
        unnest(registry_weights.resources) as pattern
    from registry_weights
    cross join weight_unit
),

tag_claimed as (
    select
        line_row,
        tag_training_run as training_run,
        'tag' as allocation_method,
        'tag ' || tag_training_run_key as allocation_rule
    from dimensions
    where tag_training_run is not null
),

cluster_parts as (
    select
        cluster_shares.line_row,
        cluster_shares.training_run,
        cluster_shares.allocation_method,
        cluster_shares.allocation_rule,
        cluster_shares.part_id,
        cluster_shares.share,
        cluster_shares.total_share
    from cluster_shares
    anti join tag_claimed on cluster_shares.line_row = tag_claimed.line_row

    union all

    select
        line_row,
        null as training_run,
        'idle_capacity' as allocation_method,
        case gke_namespace when 'kube:unallocated' then 'unallocated' else 'system overhead' end as allocation_rule,
        cast(null as bigint) as part_id,
        cast(1 as hugeint) as share,
        cast(1 as hugeint) as total_share
    from dimensions
    where tag_training_run is null and gke_namespace in ('kube:unallocated', 'kube:system-overhead')
),

cluster_lines as (
    select distinct line_row from cluster_parts
),

snapshot_claimed as (
    select
        dimensions.line_row,
        dimensions.snapshot_training_run as training_run,
        'resource_tags' as allocation_method,
        'resource_tags ' || dimensions.snapshot_training_run_key
            || ' (snapshot ' || strftime(dimensions.snapshot_at, '%Y-%m-%dT%H:%M:%SZ') || ')' as allocation_rule
    from dimensions
    anti join cluster_lines on dimensions.line_row = cluster_lines.line_row
    where dimensions.tag_training_run is null and dimensions.snapshot_training_run is not null
),

claimed as (
    select * from tag_claimed
    union all
    select * from snapshot_claimed
),

claimed_lines as (
    select line_row from claimed
    union all
    select line_row from cluster_lines
),

unclaimed_lines as (
    select line_items.*
    from line_items
    anti join claimed_lines on line_items.line_row = claimed_lines.line_row
),

-- globs are matched once per resource, not once per line of it
unclaimed_resources as (
    select distinct ResourceId
    from unclaimed_lines
    where ResourceId is not null
),

resource_patterns as (
    select unclaimed_resources.ResourceId, registry_patterns.*
    from unclaimed_resources
    inner join registry_patterns on unclaimed_resources.ResourceId glob registry_patterns.pattern
),

-- each matching run's window end and the next window of another run matching the resource:
-- its storage stays the run's in between
resource_runs as (
    select distinct ResourceId, training_run, window_start, window_end
    from resource_patterns
),

resource_holds as (
    select
        resource_runs.ResourceId,
        resource_runs.training_run,
        resource_runs.window_end,
        min(next_runs.window_start) as next_window_start
    from resource_runs
    left join resource_runs as next_runs
        on resource_runs.ResourceId = next_runs.ResourceId
        and resource_runs.training_run <> next_runs.training_run
        and next_runs.window_start >= resource_runs.window_end
    group by resource_runs.ResourceId, resource_runs.training_run, resource_runs.window_end
),

registry_windows as (
    select
        unclaimed_lines.line_row,
        resource_patterns.training_run,
        any_value(resource_patterns.weight_units) as weight_units,
        min(resource_patterns.pattern) as pattern,
        any_value(
            case
                when unclaimed_lines.duration_seconds = 0 then
                    case
                        when unclaimed_lines.ChargePeriodStart >= coalesce(
                                resource_patterns.window_start, unclaimed_lines.ChargePeriodStart
                            )
                            and unclaimed_lines.ChargePeriodStart < coalesce(
                                resource_patterns.window_end, unclaimed_lines.ChargePeriodStart + interval 1 second
                            )
                        then 1 else 0
                    end
                else greatest(
                    date_diff(
                        'second',
                        greatest(
                            unclaimed_lines.ChargePeriodStart,
                            coalesce(resource_patterns.window_start, unclaimed_lines.ChargePeriodStart)
                        ),
                        least(
                            unclaimed_lines.charge_end,
                            coalesce(resource_patterns.window_end, unclaimed_lines.charge_end)
                        )
                    ),
                    0
                )
            end
        ) as overlap_seconds,
        any_value(
            case
                when not unclaimed_lines.is_storage or resource_holds.window_end is null then 0
                when unclaimed_lines.duration_seconds = 0 then
                    case
                        when unclaimed_lines.ChargePeriodStart >= resource_holds.window_end
                            and unclaimed_lines.ChargePeriodStart < coalesce(
                                resource_holds.next_window_start,
                                unclaimed_lines.ChargePeriodStart + interval 1 second
                            )
                        then 1 else 0
                    end
                else greatest(
                    date_diff(
                        'second',
                        greatest(unclaimed_lines.ChargePeriodStart, resource_holds.window_end),
                        least(
                            unclaimed_lines.charge_end,
                            coalesce(resource_holds.next_window_start, unclaimed_lines.charge_end)
                        )
                    ),
                    0
                )
            end
        ) as after_seconds
    from unclaimed_lines
    inner join resource_patterns on unclaimed_lines.ResourceId = resource_patterns.ResourceId
    inner join resource_holds
        on resource_patterns.ResourceId = resource_holds.ResourceId
        and resource_patterns.training_run = resource_holds.training_run
    group by unclaimed_lines.line_row, resource_patterns.training_run
),

registry_overlaps as (
    select
        *,
        overlap_seconds + after_seconds as held_seconds
    from registry_windows
),

-- the covered seconds: the longest hold in a window and the longest after one (disjoint from
-- the windows of the runs starting later), at most the line's duration
registry_lines as (
    select
        registry_overlaps.line_row,
        least(
            max(registry_overlaps.overlap_seconds) + max(registry_overlaps.after_seconds),
            greatest(any_value(unclaimed_lines.duration_seconds), 1)
        ) as covered_seconds,
        sum(cast(registry_overlaps.held_seconds as hugeint) * registry_overlaps.weight_units) as weighted_overlap
    from registry_overlaps
    inner join unclaimed_lines on registry_overlaps.line_row = unclaimed_lines.line_row
    where registry_overlaps.held_seconds > 0
    group by registry_overlaps.line_row
),

-- a run's parts of a line: its window's seconds, and a storage line's seconds after it
registry_held as (
    select
        line_row,
        training_run,
        weight_units,
        'registry ' || pattern as allocation_rule,
        overlap_seconds as seconds
    from registry_overlaps

    union all

    select
        line_row,
        training_run,
        weight_units,
        'registry after window' as allocation_rule,
        after_seconds as seconds
    from registry_overlaps
),

registry_matched_lines as (
    select distinct line_row from registry_overlaps
),

final as (
    select
        line_row,
        training_run,
        allocation_method,
        allocation_rule,
        cast(null as bigint) as part_id,
        cast(1 as hugeint) as share,
        cast(1 as hugeint) as total_share
    from claimed

    union all

    select
        line_row,
        training_run,
        allocation_method,
        allocation_rule,
        part_id,
        share,
        total_share
    from cluster_parts

    union all

    select
        registry_held.line_row,
        registry_held.training_run,
        'registry' as allocation_method,
        registry_held.allocation_rule,
        cast(null as bigint) as part_id,
        cast(registry_lines.covered_seconds as hugeint) * registry_held.seconds * registry_held.weight_units as share,
        greatest(cast(unclaimed_lines.duration_seconds as hugeint), 1) * registry_lines.weighted_overlap as total_share
    from registry_held
    inner join registry_lines on registry_held.line_row = registry_lines.line_row
    inner join unclaimed_lines on registry_held.line_row = unclaimed_lines.line_row
    where registry_held.seconds > 0

    union all

    select
        unclaimed_lines.line_row,
        null as training_run,
        'unattributed' as allocation_method,
        case when registry_matched_lines.line_row is not null then 'outside registry window' end as allocation_rule,
        cast(null as bigint) as part_id,
        case
            when registry_lines.line_row is null then cast(1 as hugeint)
            else (greatest(cast(unclaimed_lines.duration_seconds as hugeint), 1) - registry_lines.covered_seconds)
                * registry_lines.weighted_overlap
        end as share,
        case
            when registry_lines.line_row is null then cast(1 as hugeint)
            else greatest(cast(unclaimed_lines.duration_seconds as hugeint), 1) * registry_lines.weighted_overlap
        end as total_share
    from unclaimed_lines
    left join registry_lines on unclaimed_lines.line_row = registry_lines.line_row
    left join registry_matched_lines on unclaimed_lines.line_row = registry_matched_lines.line_row
)

select * from final
where share > 0
