-- unattributed_costs: the tag-hygiene worklist, rebuilt whole from cost_allocations and
-- focus_line_items by its asset (sql/marts/unattributed_costs.sql) so a query reads a small table
-- instead of aggregating every allocation again.
-- Warehouses of earlier versions held it as a view: it goes before the table is created (the
-- next run's unattributed_costs step fills the table).
drop view if exists unattributed_costs;

create table if not exists unattributed_costs (
    provider varchar,
    account varchar,
    service varchar,
    resource varchar,
    billing_period date,
    currency varchar,
    cost_category varchar,
    owner varchar,
    billed_cost decimal(38, 10),
    effective_cost decimal(38, 10),
    share_of_period double,
    taggable boolean,
    spend_kind varchar,
    commitment varchar
);

-- What the table and each column hold (read into DuckDB's catalog, the Dagster column schemas and
-- docs/warehouse.md).
comment on table unattributed_costs is
    'Spend attributed to no training run per (provider, account, service, resource, commitment, spend kind, '
    'billing period, currency), newest period first, then the spend tagging could move (taggable), then the rest, '
    'largest first: the tag-hygiene worklist. Money is DECIMAL(38,10).';
comment on column unattributed_costs.provider is 'ProviderName of the lines.';
comment on column unattributed_costs.account is 'SubAccountId of the lines (AWS account, GCP project).';
comment on column unattributed_costs.service is 'ServiceName of the lines.';
comment on column unattributed_costs.resource is 'ResourceId of the lines; NULL for charges without a resource.';
comment on column unattributed_costs.billing_period is 'The billing month, as its first day.';
comment on column unattributed_costs.currency is 'BillingCurrency of the amounts.';
comment on column unattributed_costs.cost_category is 'A cost category of the lines.';
comment on column unattributed_costs.owner is 'An owner the lines name (a tag), who to ask; NULL where none.';
comment on column unattributed_costs.billed_cost is 'Sum of the unattributed billed cost.';
comment on column unattributed_costs.effective_cost is 'Sum of the unattributed effective cost.';
comment on column unattributed_costs.share_of_period is
    'effective_cost / all effective cost of the billing period in the currency, rounded to 6 decimals (0.25 is a '
    'quarter); NULL when that total is 0.';
comment on column unattributed_costs.taggable is
    'True for spend a tag could move to a run: lines of a resource (spend_kind resource). False for commitment fees '
    'and unused commitments, tax, credits, support, other purchases, charges without a resource and registered '
    'resources outside their run''s window, which the untagged_share check leaves out.';
comment on column unattributed_costs.spend_kind is
    'Why the spend is or is not taggable (the spend_kind rule on the lines'' FOCUS columns, first that applies): '
    'commitment (ChargeCategory Purchase with a CommitmentDiscountId, or CommitmentDiscountStatus Unused), tax '
    '(ChargeCategory Tax or cost category tax), credit (ChargeCategory Credit), support (cost category support), '
    'purchase (any other Purchase), no resource (no ResourceId); then outside registry window (a resource a run of '
    'the registry names, charged outside the run''s window, storage after it excepted: allocation_rule outside '
    'registry window); else resource, '
    'the taggable spend.';
comment on column unattributed_costs.commitment is
    'The CommitmentDiscountId (Savings Plan, reservation or commitment) whose fee or unused part the commitment '
    'spend is; NULL for other spend.';
