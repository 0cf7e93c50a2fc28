-- Savings Plans, reservations and committed use discounts per billing period: what each cost, how
-- much of it covered usage and how much went unused.
create table if not exists commitment_utilization (
    billing_period date not null,
    source_name varchar not null,
    provider varchar,
    currency varchar,
    commitment_id varchar not null,
    commitment_type varchar,
    commitment_category varchar,
    commitment_name varchar,
    fee_billed_cost decimal(38, 10),
    committed_cost decimal(38, 10),
    used_cost decimal(38, 10),
    unused_cost decimal(38, 10) not null,
    unused_charged_cost decimal(38, 10) not null,
    utilization decimal(38, 10),
    covered_list_cost decimal(38, 10) not null,
    eligible_list_cost decimal(38, 10),
    coverage decimal(38, 10)
);

-- What the table and each column hold (read into DuckDB's catalog, the Dagster column schemas and
-- docs/warehouse.md).
comment on table commitment_utilization is
    'One row per commitment (CommitmentDiscountId) per billing period, source and currency, from the focus_line_items '
    'carrying its id: its amortized cost, the part covered usage used and the unused part (the rows of '
    'CommitmentDiscountStatus Unused), utilization and coverage. Rebuilt whole every run after reconciliation.';
comment on column commitment_utilization.billing_period is 'The billing month, as its first day.';
comment on column commitment_utilization.source_name is 'The billing source (x_SourceName).';
comment on column commitment_utilization.provider is 'ProviderName.';
comment on column commitment_utilization.currency is 'BillingCurrency of the amounts.';
comment on column commitment_utilization.commitment_id is
    'CommitmentDiscountId: the Savings Plan, reservation or commitment.';
comment on column commitment_utilization.commitment_type is
    'CommitmentDiscountType (Savings Plan, Reservation, Committed Use Discount).';
comment on column commitment_utilization.commitment_category is 'CommitmentDiscountCategory: Spend or Usage.';
comment on column commitment_utilization.commitment_name is
    'CommitmentDiscountName; NULL where the provider names none (AWS).';
comment on column commitment_utilization.fee_billed_cost is
    'BilledCost of its fees (ChargeCategory Purchase) in the period: what the invoice charges for it (an upfront '
    'payment made in an earlier period is not in it); NULL when no fee of it is in the period.';
comment on column commitment_utilization.committed_cost is
    'Its amortized cost in the period: used_cost + unused_cost; NULL when no fee of it is in the period.';
comment on column commitment_utilization.used_cost is
    'The part covered usage used: the EffectiveCost of its covered usage (AWS: Savings Plan and reservation usage '
    'carry the commitment''s rate), or of the rows derived from its fee with status Used (GCP); NULL when no fee of '
    'it is in the period.';
comment on column commitment_utilization.unused_cost is 'EffectiveCost of its rows of CommitmentDiscountStatus Unused.';
comment on column commitment_utilization.unused_charged_cost is
    'The part of unused_cost allocated to training runs (cost_allocations): by a tag, the registry, a shared-cost '
    'rule or a commitment chargeback rule (attribution.commitments); the rest is unattributed.';
comment on column commitment_utilization.utilization is
    'used_cost / committed_cost; NULL when committed_cost is NULL or 0.';
comment on column commitment_utilization.covered_list_cost is
    'ListCost (on-demand equivalent) of the usage it covered (its Usage rows of status Used).';
comment on column commitment_utilization.eligible_list_cost is
    'ListCost of the usage it could have covered: the Usage rows of the same source, period and currency, priced '
    'Standard or Committed, of the SKUs it covered (its own, on-demand and other commitments'' usage); NULL when its '
    'covered usage names no SKU.';
comment on column commitment_utilization.coverage is
    'covered_list_cost / eligible_list_cost; NULL when eligible_list_cost is NULL or 0.';
