-- The waste of each run in $training_runs per kind (every kind listed, 0 where none), with its
-- share of the run's attributed effective cost and the one-line method of the kind.
with requested as (
    select distinct unnest($training_runs) as training_run
),

waste_items as (
    select * from waste
    where training_run in (select training_run from requested)
),

costs as (
    select training_run, sum(effective_cost) as attributed_cost
    from run_costs
    where training_run in (select training_run from requested)
    group by training_run
),

kinds as (
    select unnest([
        'idle_after_run', 'recompute_after_failure', 'checkpoint_retention',
        'cross_region_transfer', 'duplicate_experiment', 'monitoring_growth', 'data_loading_stall',
        'low_utilization'
    ]) as kind, generate_subscripts([0, 0, 0, 0, 0, 0, 0, 0], 1) as kind_order
),

per_kind as (
    select
        training_run,
        kind,
        count(*) as items,
        sum(effective_cost) as effective_cost,
        sum(gpu_hours) as gpu_hours,
        any_value(method) as method
    from waste_items
    group by training_run, kind
),

final as (
    select
        requested.training_run,
        kinds.kind,
        kinds.kind_order,
        coalesce(per_kind.items, 0) as items,
        coalesce(per_kind.effective_cost, 0) as effective_cost,
        coalesce(per_kind.gpu_hours, 0) as gpu_hours,
        decimal_divide(coalesce(per_kind.effective_cost, 0), costs.attributed_cost) as share_of_run,
        per_kind.method
    from requested
    cross join kinds
    left join costs on requested.training_run = costs.training_run
    left join per_kind on requested.training_run = per_kind.training_run and kinds.kind = per_kind.kind
)

select * exclude (kind_order) from final
order by training_run, kind_order
