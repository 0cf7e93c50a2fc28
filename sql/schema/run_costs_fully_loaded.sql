-- run_costs_fully_loaded: each run's direct cost and its exact share of the spend no run owns, per
-- billing period and currency, rebuilt whole by its asset (sql/marts/run_costs_fully_loaded.sql).
create table if not exists run_costs_fully_loaded (
    training_run varchar not null,
    billing_period date not null,
    currency varchar,
    direct_cost decimal(38, 10) not null,
    idle_capacity_share decimal(38, 10) not null,
    unused_commitment_share decimal(38, 10) not null,
    tax_share decimal(38, 10) not null,
    support_share decimal(38, 10) not null,
    other_unattributed_share decimal(38, 10) not null,
    fully_loaded_cost decimal(38, 10) not null
);

-- What the table and each column hold (read into DuckDB's catalog, the Dagster column schemas and
-- docs/warehouse.md).
comment on table run_costs_fully_loaded is
    'What each training run cost all in, per billing period and currency: its direct cost and, kind by kind, its '
    'share of the effective cost no run owns (a shared cluster''s idle capacity, unused commitments, tax, support, '
    'everything else unattributed). Each unowned amount is split among the runs of its cluster (idle capacity), '
    'else of its provider, else of the whole period, in proportion to their direct cost there, by largest '
    'remainder in units of 1e-10: over all runs fully_loaded_cost sums exactly to the period''s effective cost in '
    'every currency with a run. An analysis: cost_allocations is unchanged. Money is DECIMAL(38,10), EffectiveCost.';
comment on column run_costs_fully_loaded.training_run is 'The training run.';
comment on column run_costs_fully_loaded.billing_period is
    'The billing month, as its first day (AWS and GCP periods of one month together).';
comment on column run_costs_fully_loaded.currency is 'BillingCurrency of the amounts.';
comment on column run_costs_fully_loaded.direct_cost is
    'The run''s own effective cost: all its cost_allocations (shared-cost rule, commitment chargeback and shared '
    'idle capacity parts included), the same as its run_costs rows summed.';
comment on column run_costs_fully_loaded.idle_capacity_share is
    'Its share of the idle capacity of the shared clusters it ran on that period (idle_capacity allocations), '
    'split among the runs with allocations on each cluster by their effective cost there.';
comment on column run_costs_fully_loaded.unused_commitment_share is
    'Its share of the unattributed unused commitments (CommitmentDiscountStatus Unused; a commitment''s purchase '
    'has no effective cost).';
comment on column run_costs_fully_loaded.tax_share is 'Its share of the unattributed tax.';
comment on column run_costs_fully_loaded.support_share is 'Its share of the unattributed support spend.';
comment on column run_costs_fully_loaded.other_unattributed_share is
    'Its share of every other unattributed part: credits, untagged resources, registered resources outside their '
    'window, charges without a resource, other purchases.';
comment on column run_costs_fully_loaded.fully_loaded_cost is
    'direct_cost + the five shares: what the run cost all in.';
