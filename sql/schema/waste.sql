-- Waste: the part of each run's attributed effective cost that bought no training, one row per
-- item (a failure, an idle resource, a checkpoint bucket …), rebuilt every run from
-- cost_allocations, run_costs, budget_baselines, run_registry and run_events. An analysis of
-- attributed spend: it never changes it, and a run's rows never sum to more than its cost.
create table if not exists waste (
    training_run varchar not null,
    owner varchar,
    kind varchar not null,           -- idle_after_run | recompute_after_failure | checkpoint_retention
                                     -- | cross_region_transfer | duplicate_experiment | monitoring_growth
    cost_category varchar not null,
    effective_cost decimal(38, 10) not null,
    gpu_hours decimal(38, 10) not null,
    method varchar not null,
    detail varchar
);

-- What the table and each column hold (read into DuckDB's catalog, the Dagster column schemas and
-- docs/warehouse.md).
comment on table waste is
    'What each run''s attributed spend bought no training with: one row per waste item (an idle resource, a '
    'failure, a checkpoint bucket ...), rebuilt from cost_allocations, run_costs, budget_baselines, run_registry '
    'and run_events. An analysis of attributed spend: it changes no allocation, an attributed part counts in at '
    'most one item, and a run''s items never sum to more than its attributed effective cost. Amounts are '
    'DECIMAL(38,10) in the run''s billing currency.';
comment on column waste.training_run is 'The run whose spend was wasted.';
comment on column waste.owner is 'The run''s owner, as in run_costs; NULL where none is known.';
comment on column waste.kind is
    'idle_after_run, recompute_after_failure, checkpoint_retention, cross_region_transfer, duplicate_experiment '
    'or monitoring_growth.';
comment on column waste.cost_category is 'Cost category of the spend wasted.';
comment on column waste.effective_cost is 'The effective cost wasted, > 0.';
comment on column waste.gpu_hours is
    'GPU-hours of the item: those lost for recompute_after_failure, else those the wasted spend bought; 0 where '
    'none.';
comment on column waste.method is 'How items of the kind are computed, in one line.';
comment on column waste.detail is
    'What the item is: the resource and its last charge, the failure and its GPUs, the checkpoint counts, the '
    'transfer, the monitoring estimate or the run repeated.';
