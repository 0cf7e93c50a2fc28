-- The ledger of alert deliveries: what was sent (or tried) to which destination, never rebuilt.
create table if not exists alert_deliveries (
    alert_key varchar not null,
    destination varchar not null,
    sequence integer not null,
    event varchar not null,
    training_run varchar,
    owner varchar,
    kind varchar not null,
    threshold varchar not null,
    crossed_on date,
    amount decimal(38, 10),
    threshold_amount decimal(38, 10),
    currency varchar,
    detail varchar,
    status varchar not null,
    attempts integer not null,
    first_attempted_at timestamp not null,
    last_attempted_at timestamp not null,
    delivered_at timestamp,
    last_error varchar,
    scope_kind varchar,
    scope varchar,
    period varchar
);

-- warehouses created before this column existed
alter table alert_deliveries add column if not exists detail varchar;
alter table alert_deliveries add column if not exists scope_kind varchar;
alter table alert_deliveries add column if not exists scope varchar;
alter table alert_deliveries add column if not exists period varchar;

-- What the table and each column hold (read into DuckDB's catalog, the Dagster column schemas and
-- docs/warehouse.md).
comment on table alert_deliveries is
    'The ledger of alert deliveries: one row per (alert, destination, event) RunLedger delivered or tried to deliver, '
    'kept across runs (never rebuilt), so each alert of budget_alerts reaches each destination once when it is '
    'crossed and once more when a restatement resolves it. A failed row is tried again by the next run. Holds no '
    'secret: URLs and logins stay in the environment. Money is DECIMAL(38,10); timestamps are UTC.';
comment on column alert_deliveries.alert_key is
    'The alert''s stable key, run (or GPU instance):kind:threshold (e.g. llm-7b-pt-r1:cost:warning), for a group '
    'budget scope_kind=scope@period:group_budget:threshold (e.g. owner=ml-platform@2026-10:group_budget:warning): '
    'the same alert keeps it when a restatement moves its day or amount.';
comment on column alert_deliveries.destination is 'The destination''s name in alerts.destinations.';
comment on column alert_deliveries.sequence is
    'The event''s number for this (alert, destination): 1 the first crossing, 2 its resolution, 3 a new crossing, ...';
comment on column alert_deliveries.event is
    'crossed (the alert holds) or resolved (a restatement took a delivered crossing back).';
comment on column alert_deliveries.training_run is 'The run the alert is about; NULL for idle_gpus and group_budget.';
comment on column alert_deliveries.owner is
    'The run''s owner (run_costs) when the event was first tried; an owner''s group budget: that owner; NULL for the '
    'other group budgets and idle_gpus.';
comment on column alert_deliveries.kind is
    'What was measured, as budget_alerts.kind: cost, gpu_hours, wall_clock, storage, daily_spend_anomaly, idle_gpus or '
    'group_budget.';
comment on column alert_deliveries.threshold is 'warning or over.';
comment on column alert_deliveries.crossed_on is 'The day budget_alerts gave for the crossing.';
comment on column alert_deliveries.amount is
    'A cost alert''s cumulative amount at the end of crossed_on (budget_alerts.cumulative_cost); for the other kinds '
    'the value observed in the kind''s unit (budget_alerts.observed).';
comment on column alert_deliveries.threshold_amount is 'The amount that reaches the threshold.';
comment on column alert_deliveries.detail is
    'An alert besides cost: its sentence (budget_alerts.detail), the text its messages carry; NULL for cost.';
comment on column alert_deliveries.currency is 'The budget''s currency.';
comment on column alert_deliveries.status is
    'delivered; failed (every attempt of the last run failed: tried again next run); sending (claimed by a run that '
    'is sending it; a claim older than an hour, of a run that died, is sent again); superseded (it failed, then the '
    'alert changed back, so it is no longer sent).';
comment on column alert_deliveries.attempts is 'Attempts over all runs, the delivering one included.';
comment on column alert_deliveries.first_attempted_at is 'When a run first claimed it to send (UTC).';
comment on column alert_deliveries.last_attempted_at is 'When the last attempt (or the claim) started (UTC).';
comment on column alert_deliveries.delivered_at is 'When the destination accepted it (UTC); NULL unless delivered.';
comment on column alert_deliveries.last_error is
    'Why the last attempt failed (e.g. HTTP 500, connection refused), with every secret value removed; NULL once '
    'delivered.';
comment on column alert_deliveries.scope_kind is
    'group_budget: the dimension of the group budget (budget_alerts.scope_kind); NULL for the other kinds.';
comment on column alert_deliveries.scope is 'group_budget: the dimension''s value; NULL for the other kinds.';
comment on column alert_deliveries.period is 'group_budget: the budget''s period; NULL for the other kinds.';
