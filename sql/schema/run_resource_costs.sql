-- run_resource_costs: internal, the allocations summed per run and resource for the run reports
-- (sql/reports/*.sql), rebuilt whole with run_costs (sql/marts/run_resource_costs.sql) so a report
-- reads a small table instead of every allocation.
create table if not exists run_resource_costs (
    training_run varchar,
    billing_period_start timestamp,
    currency varchar,
    provider varchar,
    account varchar,
    service varchar,
    cost_category varchar,
    resource varchar,
    allocation_rule varchar,
    unused_commitment boolean,
    commitment_id varchar,
    commitment_type varchar,
    effective_cost decimal(38, 10),
    gpu_hours decimal(38, 10),
    first_charge timestamp,
    last_charge timestamp,
    first_charge_start timestamp,
    last_charge_end timestamp
);

-- What the table and each column hold (read into DuckDB's catalog, the Dagster column schemas and
-- docs/warehouse.md).
comment on table run_resource_costs is
    'Internal: cost_allocations summed per (training run, billing period, currency, provider, account, service, '
    'cost category, resource, allocation rule and unused commitment), unattributed spend included (run '
    'NULL), for the run reports; query run_costs, unattributed_costs or cost_allocations instead. Money is '
    'DECIMAL(38,10).';
comment on column run_resource_costs.training_run is 'The training run; NULL for unattributed spend.';
comment on column run_resource_costs.billing_period_start is 'BillingPeriodStart of the allocations, UTC.';
comment on column run_resource_costs.currency is 'BillingCurrency of the amounts.';
comment on column run_resource_costs.provider is 'ProviderName of the allocations.';
comment on column run_resource_costs.account is 'SubAccountId of the allocations.';
comment on column run_resource_costs.service is 'ServiceName of the allocations.';
comment on column run_resource_costs.cost_category is 'x_CostCategory of the allocations.';
comment on column run_resource_costs.resource is 'ResourceId of the allocations; NULL for charges without one.';
comment on column run_resource_costs.allocation_rule is 'allocation_rule of the allocations.';
comment on column run_resource_costs.unused_commitment is
    'Whether the allocations are a commitment rule''s charge of unused commitment (allocation method shared, rule '
    '`commitment ...`, line items of CommitmentDiscountStatus Unused).';
comment on column run_resource_costs.commitment_id is
    'CommitmentDiscountId of those line items where unused_commitment; NULL otherwise.';
comment on column run_resource_costs.commitment_type is
    'CommitmentDiscountType of those line items where unused_commitment; NULL otherwise.';
comment on column run_resource_costs.effective_cost is 'Sum of the allocated effective cost.';
comment on column run_resource_costs.gpu_hours is 'Sum of the allocated GPU-hours.';
comment on column run_resource_costs.first_charge is
    'Earliest ChargePeriodStart of the allocations (BillingPeriodStart where it is NULL), UTC.';
comment on column run_resource_costs.last_charge is
    'Latest ChargePeriodEnd of the allocations (else ChargePeriodStart, else BillingPeriodStart), UTC.';
comment on column run_resource_costs.first_charge_start is 'Earliest ChargePeriodStart of the allocations, UTC.';
comment on column run_resource_costs.last_charge_end is 'Latest ChargePeriodEnd of the allocations, UTC.';
