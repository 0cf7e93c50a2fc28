-- run_costs: attributed spend per run, cost category and billing period (a view).

-- name: create
-- Attributed spend per run, category and billing period (the month; GCP periods start at
-- Pacific midnight, AWS at UTC midnight, both are the same billing month). A run's experiment,
-- dataset version, owner and custom dimensions are `run_dimensions` over every period (sql/schema/macros.sql: the
-- registry's, else the value carrying most of the run's effective spend), so every row of a run
-- names the same ones whatever its lines' own tags said.
create or replace view run_costs as
with allocations as (
    select
        *,
        cast(date_trunc('month', BillingPeriodStart) as date) as billing_period
    from cost_allocations
    where training_run is not null
),

dimensions as (
    select * from run_dimensions(null, null)
),

spend as (
    select
        training_run,
        x_CostCategory as cost_category,
        billing_period,
        BillingCurrency as currency,
        sum(billed_cost) as billed_cost,
        sum(effective_cost) as effective_cost,
        sum(gpu_hours) as gpu_hours,
        min(ChargePeriodStart) as first_charge,
        max(ChargePeriodEnd) as last_charge
    from allocations
    group by training_run, x_CostCategory, billing_period, BillingCurrency
),

final as (
    select
        spend.training_run,
        dimensions.experiment,
        dimensions.dataset_version,
        dimensions.owner,
        dimensions.custom_dimensions,
        spend.cost_category,
        spend.billing_period,
        spend.currency,
        spend.billed_cost,
        spend.effective_cost,
        spend.gpu_hours,
        spend.first_charge,
        spend.last_charge
    from spend
    left join dimensions on spend.training_run = dimensions.training_run
)

select * from final;

-- name: preview
-- Attributed spend per training run over every billing period, and the run_costs rows behind it:
-- the asset's Markdown preview and row count from one read of the view.
with costs as (
    select *
    from run_costs
    where training_run is not null
),

final as (
    select
        training_run,
        currency,
        sum(billed_cost) as billed_cost,
        sum(effective_cost) as effective_cost,
        sum(gpu_hours) as gpu_hours,
        count(*) as view_rows
    from costs
    group by training_run, currency
)

select * from final
order by effective_cost desc, training_run;

-- name: comments
-- What the view and each column hold (read into DuckDB's catalog, the Dagster column schemas and
-- docs/warehouse.md); replacing the view drops them, so they follow every `create`.
comment on view run_costs is
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
