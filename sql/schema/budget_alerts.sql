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
    as_of timestamp
);

-- What the table and each column hold (read into DuckDB's catalog, the Dagster column schemas and
-- docs/warehouse.md).
comment on table budget_alerts is
    'When each budgeted run''s cumulative effective spend (all billing periods and categories) first reached its '
    'warning and its over threshold of the run''s total estimate: one row per (run, threshold) reached. Rebuilt '
    'whole every run, so a restated bill moves or removes a crossing; a crossing stays when later credits bring '
    'the spend back below it. Money is DECIMAL(38,10) in the budget''s currency.';
comment on column budget_alerts.training_run is 'The budgeted run.';
comment on column budget_alerts.threshold is 'warning or over.';
comment on column budget_alerts.threshold_fraction is 'The threshold as a fraction of the estimate, from the budget.';
comment on column budget_alerts.estimated_cost is 'The run''s total estimate.';
comment on column budget_alerts.threshold_amount is
    'round(estimated_cost x threshold_fraction, 10): the cumulative spend that reaches the threshold.';
comment on column budget_alerts.crossed_on is
    'The first UTC charge day (of ChargePeriodStart) at whose end the cumulative spend was >= threshold_amount '
    'and > 0.';
comment on column budget_alerts.cumulative_cost is 'The run''s cumulative effective cost at the end of crossed_on.';
comment on column budget_alerts.currency is 'The budget''s currency.';
comment on column budget_alerts.as_of is
    'The latest ChargePeriodEnd in cost_allocations (UTC) when the table was built.';
