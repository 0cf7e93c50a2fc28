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
