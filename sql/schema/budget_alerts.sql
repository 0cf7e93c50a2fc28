-- The first day each budgeted run's cumulative effective spend reached its warning and over
-- thresholds; rebuilt from budget_baselines and cost_allocations every night.
create table if not exists budget_alerts (
    training_run varchar,
    threshold varchar not null,
    threshold_fraction decimal(38, 10) not null,
    estimated_cost decimal(38, 10),
    threshold_amount decimal(38, 10) not null,
    crossed_on date not null,
    cumulative_cost decimal(38, 10) not null,
    currency varchar,
    as_of timestamp,
    kind varchar,
    unit varchar,
    observed decimal(38, 10),
    resource_id varchar,
    detail varchar,
    scope_kind varchar,
    scope varchar,
    period varchar
);

-- warehouses created before the threshold kinds besides cost
alter table budget_alerts add column if not exists kind varchar;
alter table budget_alerts add column if not exists unit varchar;
alter table budget_alerts add column if not exists observed decimal(38, 10);
alter table budget_alerts add column if not exists resource_id varchar;
alter table budget_alerts add column if not exists detail varchar;
-- warehouses created before the anomalies beyond runs
alter table budget_alerts add column if not exists series varchar;
alter table budget_alerts alter column training_run drop not null;
-- warehouses created before group budgets
alter table budget_alerts add column if not exists scope_kind varchar;
alter table budget_alerts add column if not exists scope varchar;
alter table budget_alerts add column if not exists period varchar;
alter table budget_alerts alter column estimated_cost drop not null;

-- What the table and each column hold (read into DuckDB's catalog, the Dagster column schemas and
-- docs/warehouse.md).
comment on table budget_alerts is
    'Every threshold a run (or an idle GPU instance, a group budget''s scope, or a series of spend beyond runs) '
    'crossed: one row per (kind, run, resource, group budget and period, or series, threshold) reached, and per day '
    'for daily_spend_anomaly. Kinds: cost (cumulative effective spend against the total estimate), gpu_hours '
    '(GPU-hours against the estimate), wall_clock (wall-clock from the first start against the plan), storage '
    '(storage spend against the storage estimate), daily_spend_anomaly (a day far above the run''s trailing median; '
    'beyond runs, a day of a cost category''s spend or of an account and service''s unattributed spend: series), '
    'idle_gpus (GPU-instance hours with spend and no run), group_budget (a group budget''s scope''s cumulative '
    'spend in a period against its amount). Rebuilt whole every run, so a restated bill moves or removes a '
    'crossing; a crossing stays when later credits bring the spend back below it. Money is DECIMAL(38,10) in the '
    'budget''s (or the bill''s) currency.';
comment on column budget_alerts.training_run is
    'The budgeted run; NULL for idle_gpus, group_budget and a daily_spend_anomaly beyond runs (series).';
comment on column budget_alerts.threshold is 'warning or over.';
comment on column budget_alerts.threshold_fraction is
    'The level crossed, as configured: a fraction of the plan (cost, gpu_hours, wall_clock, storage), a multiple '
    'of the trailing median (daily_spend_anomaly) or hours (idle_gpus).';
comment on column budget_alerts.estimated_cost is
    'The run''s total estimate (group_budget: the period''s total amount); NULL for the other kinds without a run.';
comment on column budget_alerts.threshold_amount is
    'The value that reaches the level, in unit: round(plan x threshold_fraction, 10) (the plan is the total '
    'estimate, estimated GPU-hours, planned wall-clock hours or the storage estimate), threshold_fraction x the '
    'trailing median for daily_spend_anomaly, the hours for idle_gpus.';
comment on column budget_alerts.crossed_on is
    'The first UTC day at whose end observed was >= threshold_amount (and > 0); for daily_spend_anomaly the '
    'anomalous day itself.';
comment on column budget_alerts.cumulative_cost is
    'The run''s cumulative effective cost at the end of crossed_on (for idle_gpus: the instance''s idle spend; for '
    'a daily_spend_anomaly beyond runs: the series'' spend that day).';
comment on column budget_alerts.currency is
    'The budget''s currency (without a run: the billing currency).';
comment on column budget_alerts.as_of is
    'The latest ChargePeriodEnd in cost_allocations (UTC) when the table was built.';
comment on column budget_alerts.kind is
    'cost, gpu_hours, wall_clock, storage, daily_spend_anomaly, idle_gpus or group_budget (NULL only in rows written '
    'before '
    'the kinds existed, which were cost).';
comment on column budget_alerts.unit is
    'The unit of threshold_amount and observed: the currency, GPU-hours or hours.';
comment on column budget_alerts.observed is
    'The measured value at the end of crossed_on, in unit: cumulative spend, GPU-hours, wall-clock hours, storage '
    'spend, the day''s spend (daily_spend_anomaly; a cost category''s without the runs starting that day) or '
    'idle hours (idle_gpus).';
comment on column budget_alerts.resource_id is 'idle_gpus: the GPU instance (ResourceId); NULL otherwise.';
comment on column budget_alerts.detail is 'One line of text saying what was crossed.';
comment on column budget_alerts.series is
    'A daily_spend_anomaly beyond runs (training_run NULL): the series judged, `spend of cost category <category> '
    '(<currency>)` or `unattributed spend of account <SubAccountId>, service <ServiceName> (<currency>)`; NULL '
    'otherwise.';
comment on column budget_alerts.scope_kind is
    'group_budget: the dimension the group budget scopes (experiment, owner, dataset_version, cluster or a custom '
    'dimension); NULL for the other kinds.';
comment on column budget_alerts.scope is 'group_budget: the dimension''s value; NULL for the other kinds.';
comment on column budget_alerts.period is
    'group_budget: the budget''s period, YYYY-MM or the window''s start date (as group_budget_variance); NULL for '
    'the other kinds.';
