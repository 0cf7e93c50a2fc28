-- One run's waste per kind (every kind listed, 0 where none), with its share of the run's
-- attributed effective cost and the one-line method of the kind.
with waste_items as (
    select * from waste where training_run = $training_run
),

costs as (
    select sum(effective_cost) as attributed_cost from cost_allocations where training_run = $training_run
),

kinds as (
    select unnest([
        'idle_after_run', 'recompute_after_failure', 'checkpoint_retention',
        'cross_region_transfer', 'duplicate_experiment', 'monitoring_growth'
    ]) as kind, generate_subscripts([0, 0, 0, 0, 0, 0], 1) as kind_order
),

per_kind as (
    select
        kind,
        count(*) as items,
        sum(effective_cost) as effective_cost,
        sum(gpu_hours) as gpu_hours,
        any_value(method) as method
    from waste_items
    group by kind
),

final as (
    select
        kinds.kind,
        coalesce(per_kind.items, 0) as items,
        coalesce(per_kind.effective_cost, 0) as effective_cost,
        coalesce(per_kind.gpu_hours, 0) as gpu_hours,
        decimal_divide(coalesce(per_kind.effective_cost, 0), costs.attributed_cost) as share_of_run,
        per_kind.method
    from kinds
    cross join costs
    left join per_kind on kinds.kind = per_kind.kind
    order by kinds.kind_order
)

select * from final
