-- run_costs: attributed spend per run, cost category and billing period, rebuilt whole from
-- cost_allocations and the run registry by its asset (sql/marts/run_costs.sql) so a query reads a
-- small table instead of aggregating every allocation again.
-- Warehouses of earlier versions held it as a view: it goes before the table is created (the
-- next run's run_costs step fills the table).
drop view if exists run_costs;

create table if not exists run_costs (
    training_run varchar,
    experiment varchar,
    dataset_version varchar,
    owner varchar,
    custom_dimensions map(varchar, varchar),
    cost_category varchar,
    billing_period date,
    currency varchar,
    billed_cost decimal(38, 10),
    effective_cost decimal(38, 10),
    gpu_hours decimal(38, 10),
    first_charge timestamp,
    last_charge timestamp
);

-- What the table and each column hold (read into DuckDB's catalog, the Dagster column schemas and
-- docs/warehouse.md).
comment on table run_costs is
    'Attributed spend per (training run, cost category, billing period, currency), from cost_allocations: what '
    'each run cost, month by month. Unattributed spend is in unattributed_costs. Money is DECIMAL(38,10).';
comment on column run_costs.training_run is 'The training run.';
comment on column run_costs.experiment is
    'The run''s experiment: its registry value, else the value carrying most of its effective cost (ties: the '
    'smaller), the same on every row of the run; NULL where none names it.';
comment on column run_costs.dataset_version is
    'The run''s dataset version, chosen as experiment is; NULL where none names it.';
comment on column run_costs.owner is 'The run''s owner, chosen as experiment is; NULL where none names it.';
comment on column run_costs.custom_dimensions is
    'The run''s values of the custom attribution dimensions by name, each chosen as experiment is (the value '
    'carrying most of its effective cost), e.g. custom_dimensions[''environment'']; empty without any (NULL for '
    'a run no dimension names at all).';
comment on column run_costs.cost_category is 'The cost category (x_CostCategory).';
comment on column run_costs.billing_period is
    'The billing month, as its first day (AWS and GCP periods of one month together).';
comment on column run_costs.currency is 'BillingCurrency of the amounts.';
comment on column run_costs.billed_cost is 'Sum of the run''s allocated billed cost.';
comment on column run_costs.effective_cost is 'Sum of the run''s allocated effective cost.';
comment on column run_costs.gpu_hours is 'Sum of the run''s allocated GPU-hours.';
comment on column run_costs.first_charge is 'Earliest ChargePeriodStart of those allocations, UTC.';
comment on column run_costs.last_charge is 'Latest ChargePeriodEnd of those allocations, UTC.';
