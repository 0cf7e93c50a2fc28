-- The first day each budgeted run's cumulative effective spend reached its warning and over
-- thresholds; rebuilt from budget_baselines and cost_allocations every night.
create table if not exists budget_alerts (
    training_run varchar not null,
    threshold varchar not null,
    threshold_fraction decimal(38, 10) not null,
    estimated_cost decimal(38, 10) not null,
    threshold_amount decimal(38, 10) not null,
    crossed_on date not null,
    cumulative_cost decimal(38, 10) not null,
    currency varchar,
    as_of timestamp,
    primary key (training_run, threshold)
);
