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
    -- tag | cluster | idle_capacity | resource_tags | registry | shared | unattributed
    allocation_method varchar not null,
    allocation_rule varchar,
    allocation_ratio decimal(38, 10) not null,
    billed_cost decimal(38, 10) not null,
    effective_cost decimal(38, 10) not null,
    gpu_hours decimal(38, 10) not null
);

-- The values of the user's own attribution dimensions (attribution.dimensions beyond the four), by
-- dimension name: a map, so the table's columns stay the same whatever the config names.
alter table cost_allocations add column if not exists custom_dimensions map(varchar, varchar);

-- The shared cluster a part belongs to and the job that held it (warehouses created before these
-- columns existed get them empty).
alter table cost_allocations add column if not exists cluster varchar;
alter table cost_allocations add column if not exists job_id varchar;

-- A partition per billing period: the period's allocations are replaced whole.
-- (DuckLake DDL, which sqlfluff does not parse)
alter table cost_allocations set partitioned by (year(BillingPeriodStart), month(BillingPeriodStart));  -- noqa: PRS

-- What the table and each column hold (read into DuckDB's catalog, the Dagster column schemas and
-- docs/warehouse.md).
comment on table cost_allocations is
    'Every line item of focus_line_items attributed to a training run or explicitly to none: one row per (line '
    'item, allocation target). Per line item the allocation ratios sum to exactly 1 and the parts to exactly its '
    'BilledCost and EffectiveCost (splits by largest remainder in units of 1e-10). Money is DECIMAL(38,10) in '
    'BillingCurrency. Rebuilt one billing period at a time, in one transaction with its conservation check.';
comment on column cost_allocations.x_LineItemKey is 'The line item allocated (focus_line_items.x_LineItemKey).';
comment on column cost_allocations.x_SourceName is 'The billing source of the line item.';
comment on column cost_allocations.BillingPeriodStart is 'Start of the line item''s billing period, UTC.';
comment on column cost_allocations.BillingCurrency is 'Currency of billed_cost and effective_cost.';
comment on column cost_allocations.ChargePeriodStart is 'Start of the time the line item''s charge covers, UTC.';
comment on column cost_allocations.ChargePeriodEnd is 'End of the time the line item''s charge covers, UTC.';
comment on column cost_allocations.ProviderName is 'Provider of the line item.';
comment on column cost_allocations.SubAccountId is 'Account or project of the line item.';
comment on column cost_allocations.ServiceName is 'Service of the line item.';
comment on column cost_allocations.x_CostCategory is
    'Cost category of the line item (focus_line_items.x_CostCategory).';
comment on column cost_allocations.ResourceId is 'Resource of the line item; NULL for charges without one.';
comment on column cost_allocations.training_run is
    'The training run the part is attributed to; NULL when unattributed.';
comment on column cost_allocations.experiment is
    'Experiment of the part: from the line''s tags, else its resource tag snapshot, else the run''s registry entry '
    '(a shared part describes its run: its registry entry, else the value carrying most of the run''s effective '
    'cost in the period); NULL where none names it.';
comment on column cost_allocations.dataset_version is
    'Dataset version of the part, found as experiment is; NULL where none names it.';
comment on column cost_allocations.owner is 'Owner of the part, found as experiment is; NULL where none names it.';
comment on column cost_allocations.custom_dimensions is
    'The part''s values of the custom attribution dimensions (attribution.dimensions beyond the four), by '
    'dimension name, e.g. {environment: prod}: each from the line''s tags, else its resource tag snapshot (a '
    'shared part: its run''s value, as experiment); a dimension without a value has no entry. '
    'Query one as custom_dimensions[''environment''].';
comment on column cost_allocations.allocation_method is
    'How the part was attributed, in this order of precedence: tag (the line''s own tags), cluster (a job''s share '
    'of a shared cluster node''s line, by the GPU-seconds it held), idle_capacity (the share of a cluster node no '
    'job held, or a GKE unallocated or system overhead bucket: the cluster''s, training_run NULL), resource_tags '
    '(the resource tag snapshot valid at its charge time), registry (a run registry resource glob and window), '
    'shared (a shared-cost rule, commitment chargeback or idle capacity sharing split it among runs) or '
    'unattributed.';
comment on column cost_allocations.allocation_rule is
    'The rule that decided it, e.g. tag user_training_run, cluster p5-cluster, unallocated, system overhead, '
    'idle p5-cluster, resource_tags TrainingRun (snapshot 2026-10-15T00:00:00Z), registry i-0a1*, registry after '
    'window (a registered run''s storage charged after its window), shared support (proportional), outside registry '
    'window.';
comment on column cost_allocations.allocation_ratio is
    'The part''s share of the line item, 0 to 1; the ratios of a line item sum to exactly 1.';
comment on column cost_allocations.billed_cost is
    'The part''s share of the line item''s BilledCost, in BillingCurrency; the parts sum to it exactly.';
comment on column cost_allocations.effective_cost is
    'The part''s share of the line item''s EffectiveCost, in BillingCurrency; the parts sum to it exactly.';
comment on column cost_allocations.gpu_hours is 'The part''s share of the line item''s x_GpuHours.';
comment on column cost_allocations.cluster is
    'The shared cluster the part belongs to: its node''s cluster (cluster, idle_capacity and shared idle parts), or '
    'the cluster GKE cost allocation names the line with; NULL elsewhere.';
comment on column cost_allocations.job_id is
    'The scheduler job whose share the part is (allocation_method cluster): a Slurm job id or a Kubernetes '
    'namespace/pod; NULL elsewhere.';
