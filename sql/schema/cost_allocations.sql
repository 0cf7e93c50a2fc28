-- One row per (line item, allocation target). Per line item the ratios sum to 1 and the
-- costs sum exactly to its BilledCost and EffectiveCost.
create table if not exists cost_allocations (
    x_LineItemKey varchar not null,
    x_SourceName varchar not null,
    BillingPeriodStart timestamp not null,
    BillingCurrency varchar,
    ChargePeriodStart timestamp,
    ChargePeriodEnd timestamp,
    ProviderName varchar,
    SubAccountId varchar,
    ServiceName varchar,
    x_CostCategory varchar not null,
    ResourceId varchar,
    training_run varchar,
    experiment varchar,
    dataset_version varchar,
    owner varchar,
    allocation_method varchar not null,   -- tag | resource_tags | registry | shared | unattributed
    allocation_rule varchar,
    allocation_ratio decimal(38, 10) not null,
    billed_cost decimal(38, 10) not null,
    effective_cost decimal(38, 10) not null,
    gpu_hours decimal(38, 10) not null
);
