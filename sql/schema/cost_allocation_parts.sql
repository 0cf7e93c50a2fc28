-- cost_allocation_parts: the stored allocations, one row per (line item, allocation target),
-- without the line item's descriptive columns. Internal: queries read the view cost_allocations
-- (sql/schema/cost_allocations.sql), which joins them from focus_line_items; the attribution step
-- writes this table and the conservation checks and summaries read it.
create table if not exists cost_allocation_parts (
    x_LineItemKey varchar not null,
    x_SourceName varchar not null,
    BillingPeriodStart timestamp not null,
    -- kept with the money, so the allocated totals per currency need no join
    BillingCurrency varchar,
    training_run varchar,
    experiment varchar,
    dataset_version varchar,
    owner varchar,
    custom_dimensions map(varchar, varchar),
    allocation_method varchar not null,
    allocation_rule varchar,
    allocation_ratio decimal(38, 10) not null,
    billed_cost decimal(38, 10) not null,
    effective_cost decimal(38, 10) not null,
    gpu_hours decimal(38, 10) not null,
    cluster varchar,
    job_id varchar
);

-- A partition per billing period: the period's allocations are replaced whole.
-- (DuckLake DDL, which sqlfluff does not parse)
alter table cost_allocation_parts set partitioned by (year(BillingPeriodStart), month(BillingPeriodStart));  -- noqa: PRS

-- What the table and each column hold (read into DuckDB's catalog, the Dagster column schemas and
-- docs/warehouse.md).
comment on table cost_allocation_parts is
    'Internal: the stored rows of cost_allocations, without the columns cost_allocations takes from the line '
    'item in focus_line_items (ChargePeriodStart, ChargePeriodEnd, ProviderName, SubAccountId, ServiceName, '
    'x_CostCategory, ResourceId). Query cost_allocations: this table''s name and columns may change in any '
    'version. Rebuilt one billing period at a time, in one transaction with its conservation check.';
comment on column cost_allocation_parts.x_LineItemKey is 'The line item allocated (focus_line_items.x_LineItemKey).';
comment on column cost_allocation_parts.x_SourceName is 'The billing source of the line item.';
comment on column cost_allocation_parts.BillingPeriodStart is 'Start of the line item''s billing period, UTC.';
comment on column cost_allocation_parts.BillingCurrency is 'Currency of billed_cost and effective_cost.';
comment on column cost_allocation_parts.training_run is 'As cost_allocations.training_run.';
comment on column cost_allocation_parts.experiment is 'As cost_allocations.experiment.';
comment on column cost_allocation_parts.dataset_version is 'As cost_allocations.dataset_version.';
comment on column cost_allocation_parts.owner is 'As cost_allocations.owner.';
comment on column cost_allocation_parts.custom_dimensions is 'As cost_allocations.custom_dimensions.';
comment on column cost_allocation_parts.allocation_method is 'As cost_allocations.allocation_method.';
comment on column cost_allocation_parts.allocation_rule is 'As cost_allocations.allocation_rule.';
comment on column cost_allocation_parts.allocation_ratio is 'As cost_allocations.allocation_ratio.';
comment on column cost_allocation_parts.billed_cost is 'As cost_allocations.billed_cost.';
comment on column cost_allocation_parts.effective_cost is 'As cost_allocations.effective_cost.';
comment on column cost_allocation_parts.gpu_hours is 'As cost_allocations.gpu_hours.';
comment on column cost_allocation_parts.cluster is 'As cost_allocations.cluster.';
comment on column cost_allocation_parts.job_id is 'As cost_allocations.job_id.';
