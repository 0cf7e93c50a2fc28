-- Waste per run, kind and cost category, with the run's attributed cost and the waste's share.
-- name: create
create or replace view waste_by_run as
with waste_items as (
    select * from waste
),

costs as (
    select training_run, sum(effective_cost) as attributed_cost
    from run_costs
    group by training_run
),

final as (
    select
        waste_items.training_run,
        any_value(waste_items.owner) as owner,
        waste_items.kind,
        waste_items.cost_category,
        count(*) as items,
        sum(waste_items.effective_cost) as effective_cost,
        sum(waste_items.gpu_hours) as gpu_hours,
        any_value(costs.attributed_cost) as attributed_cost,
        decimal_divide(sum(waste_items.effective_cost), any_value(costs.attributed_cost)) as share_of_run
    from waste_items
    left join costs on waste_items.training_run = costs.training_run
    group by waste_items.training_run, waste_items.kind, waste_items.cost_category
)

select * from final;

-- name: comments
-- What the view and each column hold (read into DuckDB's catalog, the Dagster column schemas and
-- docs/warehouse.md); replacing the view drops them, so they follow every `create`.
comment on view waste_by_run is
    'Waste per (training run, kind, cost category), with the run''s attributed effective cost and the waste''s '
    'share of it. Money is DECIMAL(38,10) in the run''s billing currency.';
comment on column waste_by_run.training_run is 'The run.';
comment on column waste_by_run.owner is 'The run''s owner; NULL where none is known.';
comment on column waste_by_run.kind is 'The waste kind (as waste.kind).';
comment on column waste_by_run.cost_category is 'Cost category of the spend wasted.';
comment on column waste_by_run.items is 'Waste items of the kind and category.';
comment on column waste_by_run.effective_cost is 'Their effective cost.';
comment on column waste_by_run.gpu_hours is 'Their GPU-hours.';
comment on column waste_by_run.attributed_cost is
    'The run''s attributed effective cost over all categories and billing periods (run_costs).';
comment on column waste_by_run.share_of_run is
    'effective_cost / attributed_cost as a fraction; NULL when attributed_cost is 0 or unknown.';
