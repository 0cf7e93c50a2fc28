-- One row per billing line after restatements; FOCUS 1.2 column names plus x_ extensions.
-- Timestamps are UTC (stored without a time zone). Money is DECIMAL(38,10).
-- x_LineItemKey is unique by construction (source, then the line's place in its delivery) and
-- carries no index: an index over tens of millions of keys would live in memory.
create table if not exists focus_line_items (
    BillingAccountId varchar,
    BillingAccountName varchar,
    BillingCurrency varchar,
    BillingPeriodStart timestamp,
    BillingPeriodEnd timestamp,
    ChargePeriodStart timestamp,
    ChargePeriodEnd timestamp,
    ChargeCategory varchar,
    ChargeClass varchar,
    ChargeDescription varchar,
    ChargeFrequency varchar,
    ProviderName varchar,
    PublisherName varchar,
    InvoiceIssuerName varchar,
    InvoiceId varchar,
    ServiceName varchar,
    ServiceCategory varchar,
    SubAccountId varchar,
    SubAccountName varchar,
    RegionId varchar,
    AvailabilityZone varchar,
    ResourceId varchar,
    ResourceName varchar,
    ResourceType varchar,
    SkuId varchar,
    SkuPriceId varchar,
    PricingCategory varchar,
    PricingQuantity decimal(38, 10),
    PricingUnit varchar,
    ConsumedQuantity decimal(38, 10),
    ConsumedUnit varchar,
    ListUnitPrice decimal(38, 10),
    ListCost decimal(38, 10),
    ContractedCost decimal(38, 10),
    EffectiveCost decimal(38, 10),
    BilledCost decimal(38, 10),
    CommitmentDiscountId varchar,
    CommitmentDiscountType varchar,
    CommitmentDiscountStatus varchar,
    Tags map(varchar, varchar),
    BillingAccountType varchar,
    SubAccountType varchar,
    RegionName varchar,
    ServiceSubcategory varchar,
    SkuMeter varchar,
    SkuPriceDetails varchar,
    ContractedUnitPrice decimal(38, 10),
    PricingCurrency varchar,
    PricingCurrencyContractedUnitPrice decimal(38, 10),
    PricingCurrencyEffectiveCost decimal(38, 10),
    PricingCurrencyListUnitPrice decimal(38, 10),
    CommitmentDiscountCategory varchar,
    CommitmentDiscountName varchar,
    CommitmentDiscountQuantity decimal(38, 10),
    CommitmentDiscountUnit varchar,
    CapacityReservationId varchar,
    CapacityReservationStatus varchar,
    x_LineItemKey varchar not null,
    x_SourceName varchar not null,
    x_SourceFormat varchar not null,
    x_SourceFile varchar,
    x_IngestedAt timestamp,
    x_CostCategory varchar not null,
    x_InstanceType varchar,
    x_GpuCount integer,
    x_GpuHours decimal(38, 10) not null,
    x_Credits map(varchar, decimal(38, 10)),      -- GCP: Σ credits per credit type (negative)
    x_CurrencyConversionRate decimal(38, 10),     -- GCP: cost ÷ rate = USD; amounts stay in BillingCurrency
    x_SystemLabels map(varchar, varchar),         -- GCP: system_labels, kept apart from Tags
    x_ProviderPricingUnit varchar,
    x_ProviderConsumedUnit varchar,
    x_ExtraColumns map(varchar, varchar),
    x_DerivedFrom varchar,
    x_SplitParentResourceId varchar,              -- AWS split cost allocation data (EKS/ECS pods)
    x_SplitCost decimal(38, 10),
    x_SplitUnusedCost decimal(38, 10)
);

-- warehouses created before these columns existed
alter table focus_line_items add column if not exists BillingAccountType varchar;
alter table focus_line_items add column if not exists SubAccountType varchar;
alter table focus_line_items add column if not exists RegionName varchar;
alter table focus_line_items add column if not exists ServiceSubcategory varchar;
alter table focus_line_items add column if not exists SkuMeter varchar;
alter table focus_line_items add column if not exists SkuPriceDetails varchar;
alter table focus_line_items add column if not exists ContractedUnitPrice decimal(38, 10);
alter table focus_line_items add column if not exists PricingCurrency varchar;
alter table focus_line_items add column if not exists PricingCurrencyContractedUnitPrice decimal(38, 10);
alter table focus_line_items add column if not exists PricingCurrencyEffectiveCost decimal(38, 10);
alter table focus_line_items add column if not exists PricingCurrencyListUnitPrice decimal(38, 10);
alter table focus_line_items add column if not exists CommitmentDiscountCategory varchar;
alter table focus_line_items add column if not exists CommitmentDiscountName varchar;
alter table focus_line_items add column if not exists CommitmentDiscountQuantity decimal(38, 10);
alter table focus_line_items add column if not exists CommitmentDiscountUnit varchar;
alter table focus_line_items add column if not exists CapacityReservationId varchar;
alter table focus_line_items add column if not exists CapacityReservationStatus varchar;
alter table focus_line_items add column if not exists x_ProviderPricingUnit varchar;
alter table focus_line_items add column if not exists x_ProviderConsumedUnit varchar;
alter table focus_line_items add column if not exists x_ExtraColumns map(varchar, varchar);
alter table focus_line_items add column if not exists x_DerivedFrom varchar;
alter table focus_line_items add column if not exists x_SplitParentResourceId varchar;
alter table focus_line_items add column if not exists x_SplitCost decimal(38, 10);
alter table focus_line_items add column if not exists x_SplitUnusedCost decimal(38, 10);

-- A partition per (source, billing period): a reload deletes whole files of the lake, never rows
-- inside files, so a restated period leaves no delete files behind.
-- (DuckLake DDL, which sqlfluff does not parse)
alter table focus_line_items set partitioned by (x_SourceName, year(BillingPeriodStart), month(BillingPeriodStart));  -- noqa: PRS

-- What the table and each column hold (read into DuckDB's catalog, the Dagster column schemas and
-- docs/warehouse.md).
comment on table focus_line_items is
    'Billing line items on the FOCUS 1.2 model: one row per line of the latest delivery of each (billing source, '
    'billing period), FOCUS column names plus x_ extensions. A reload replaces the (source, period) whole. Money '
    'is DECIMAL(38,10) in BillingCurrency; timestamps are UTC, stored without a time zone.';
comment on column focus_line_items.BillingAccountId is
    'The account the provider invoices: the AWS payer account, the GCP billing account.';
comment on column focus_line_items.BillingAccountName is 'Name of the billing account; NULL where the export has none.';
comment on column focus_line_items.BillingCurrency is
    'ISO 4217 currency of every amount of the line (e.g. USD): one per (source, billing period), never converted.';
comment on column focus_line_items.BillingPeriodStart is
    'Start of the billing period (inclusive), UTC: the first of the month at 00:00 for AWS; for GCP the first '
    'midnight of the invoice month in America/Los_Angeles (07:00 or 08:00 UTC).';
comment on column focus_line_items.BillingPeriodEnd is 'End of the billing period (exclusive), UTC.';
comment on column focus_line_items.ChargePeriodStart is 'Start of the time the charge covers (inclusive), UTC.';
comment on column focus_line_items.ChargePeriodEnd is 'End of the time the charge covers (exclusive), UTC.';
comment on column focus_line_items.ChargeCategory is
    'FOCUS charge category: Usage, Purchase, Tax, Credit or Adjustment.';
comment on column focus_line_items.ChargeClass is
    'Correction when the line restates charges already billed (a correction of an earlier period), else NULL.';
comment on column focus_line_items.ChargeDescription is
    'The provider''s description of the charge (AWS line item description, GCP SKU description).';
comment on column focus_line_items.ChargeFrequency is 'One-Time, Recurring or Usage-Based.';
comment on column focus_line_items.ProviderName is
    'Provider of the resource or service, e.g. Amazon Web Services, Google Cloud.';
comment on column focus_line_items.PublisherName is
    'Publisher of the service: the provider, or a marketplace vendor.';
comment on column focus_line_items.InvoiceIssuerName is 'Who invoices the line: the provider, or a reseller.';
comment on column focus_line_items.InvoiceId is 'The invoice the line is billed on; NULL where the export has none.';
comment on column focus_line_items.ServiceName is
    'The service charged, as the provider names it (e.g. Amazon Elastic Compute Cloud, Compute Engine).';
comment on column focus_line_items.ServiceCategory is
    'FOCUS service category (Compute, Storage, Networking, AI and Machine Learning, ...).';
comment on column focus_line_items.SubAccountId is
    'The account the resource belongs to: the AWS usage account, the GCP project id.';
comment on column focus_line_items.SubAccountName is 'Name of the sub-account (GCP project name); NULL where none.';
comment on column focus_line_items.RegionId is
    'Provider region of the resource (e.g. us-east-1, us-central1); NULL for global charges.';
comment on column focus_line_items.AvailabilityZone is 'Availability zone of the resource; NULL where none.';
comment on column focus_line_items.ResourceId is
    'The provider''s identifier of the resource (instance id, ARN, bucket, GCP resource name); NULL for charges '
    'without a resource. Registry globs and resource tag snapshots match on it.';
comment on column focus_line_items.ResourceName is 'Display name of the resource; NULL where the export has none.';
comment on column focus_line_items.ResourceType is 'Kind of the resource; NULL where the export has none.';
comment on column focus_line_items.SkuId is 'The provider''s identifier of the product charged.';
comment on column focus_line_items.SkuPriceId is 'The provider''s identifier of the price the line was rated at.';
comment on column focus_line_items.PricingCategory is 'Standard (on demand), Committed, Dynamic (spot) or Other.';
comment on column focus_line_items.PricingQuantity is
    'Quantity the price applies to, in PricingUnit; NULL on Tax lines (and on credits and adjustments without a '
    'unit).';
comment on column focus_line_items.PricingUnit is
    'Unit of PricingQuantity and ListUnitPrice in FOCUS''s unit format (Hours, GB-Months, Requests, ...): the '
    'provider''s unit (x_ProviderPricingUnit) mapped onto FOCUS units; NULL exactly where PricingQuantity is NULL.';
comment on column focus_line_items.ConsumedQuantity is 'Quantity used, in ConsumedUnit; NULL for lines without usage.';
comment on column focus_line_items.ConsumedUnit is
    'Unit of ConsumedQuantity in FOCUS''s unit format (e.g. Hours, GB-Months, Seconds); NULL exactly where '
    'ConsumedQuantity is NULL.';
comment on column focus_line_items.ListUnitPrice is 'Public list price per PricingUnit, in BillingCurrency.';
comment on column focus_line_items.ListCost is 'Cost at public list prices, in BillingCurrency.';
comment on column focus_line_items.ContractedCost is
    'Cost at the prices negotiated with the provider, before commitment discounts, in BillingCurrency.';
comment on column focus_line_items.EffectiveCost is
    'Amortized cost in BillingCurrency: commitment purchases spread over the usage they cover, net of discounts '
    'and credits. What attribution, budgets and waste count.';
comment on column focus_line_items.BilledCost is
    'The amount invoiced for the line, in BillingCurrency: the sum the conservation checks compare with the raw '
    'export.';
comment on column focus_line_items.CommitmentDiscountId is
    'The Savings Plan, reservation or committed use discount applied to the line; NULL where none.';
comment on column focus_line_items.CommitmentDiscountType is 'Type of that commitment discount; NULL where none.';
comment on column focus_line_items.CommitmentDiscountStatus is
    'Used on usage a commitment discount covers, Unused on the row of its unused part (x_DerivedFrom); NULL on '
    'purchases and lines without a commitment.';
comment on column focus_line_items.Tags is
    'Resource tags and labels, key to value, keys as the export writes them (GCP: labels, then project labels for '
    'keys the resource does not set). Attribution compares keys with normalize_tag_key: lower case, -, space and '
    ': as _, a leading user_ (AWS user tags) or k8s_label/ (GKE cost allocation''s pod labels) dropped.';
comment on column focus_line_items.BillingAccountType is
    'Provider label for the kind of billing account (e.g. AWS: Payer Account; GCP: Billing Account).';
comment on column focus_line_items.SubAccountType is
    'Provider label for the kind of sub-account (e.g. AWS: Linked Account; GCP: Project); NULL without one.';
comment on column focus_line_items.RegionName is 'Display name of RegionId (e.g. US East (N. Virginia)); NULL without a region.';
comment on column focus_line_items.ServiceSubcategory is
    'FOCUS service subcategory within ServiceCategory (e.g. Virtual Machines, Object Storage); Other where none fits.';
comment on column focus_line_items.SkuMeter is 'What the SKU measures (e.g. AWS usage type, GCP SKU description); NULL where none.';
comment on column focus_line_items.SkuPriceDetails is
    'Properties of the SKU price as a JSON object text (e.g. {"InstanceType": "p5.48xlarge"}); NULL where none.';
comment on column focus_line_items.ContractedUnitPrice is
    'Price per PricingUnit negotiated with the provider, before commitment discounts, in BillingCurrency.';
comment on column focus_line_items.PricingCurrency is
    'Currency of the provider''s price list (AWS pricing_currency); NULL where the export gives none.';
comment on column focus_line_items.PricingCurrencyContractedUnitPrice is
    'ContractedUnitPrice in PricingCurrency; NULL where the export gives no conversion (AWS: PricingCurrency is not '
    'BillingCurrency).';
comment on column focus_line_items.PricingCurrencyEffectiveCost is
    'EffectiveCost in PricingCurrency; NULL where the export gives no conversion (AWS: PricingCurrency is not '
    'BillingCurrency).';
comment on column focus_line_items.PricingCurrencyListUnitPrice is
    'ListUnitPrice in PricingCurrency (AWS: pricing_public_on_demand_rate, which is in pricing_currency).';
comment on column focus_line_items.CommitmentDiscountCategory is
    'Spend (Savings Plans, spend-based CUDs) or Usage (reservations, resource-based CUDs); NULL without a commitment.';
comment on column focus_line_items.CommitmentDiscountName is 'Display name of the commitment discount; NULL where none.';
comment on column focus_line_items.CommitmentDiscountQuantity is
    'Amount of the commitment the line used or left unused, in CommitmentDiscountUnit; NULL without a commitment.';
comment on column focus_line_items.CommitmentDiscountUnit is
    'Unit of CommitmentDiscountQuantity (e.g. Hours, USD); NULL without a commitment.';
comment on column focus_line_items.CapacityReservationId is 'The capacity reservation the line used or left unused; NULL where none.';
comment on column focus_line_items.CapacityReservationStatus is
    'Used or Unused, for lines of a capacity reservation; NULL where none.';
comment on column focus_line_items.x_LineItemKey is
    'RunLedger''s key of the line, unique by construction: the source name, then the line''s place in its '
    'delivery (AWS exports source|YYYY-MM|executionId|row, files source|file|row); stable across reloads of the '
    'same delivery. cost_allocations refers to it.';
comment on column focus_line_items.x_SourceName is 'The billing source the line was loaded from (sources[].name).';
comment on column focus_line_items.x_SourceFormat is
    'The export format it was read as: aws_cur2, aws_legacy_csv, aws_legacy_parquet, aws_focus, gcp_billing or '
    'focus.';
comment on column focus_line_items.x_SourceFile is
    'The raw file (as an s3:// URI or a path) or BigQuery table the line was read from; NULL where not known.';
comment on column focus_line_items.x_IngestedAt is 'When the load that wrote the line read it, UTC.';
comment on column focus_line_items.x_CostCategory is
    'RunLedger''s cost category: compute, storage, network, data, monitoring, support, tax or other, or for costs '
    'no cloud bills labor, data_labeling, tooling, on_prem, migration or opportunity. The first matching rule of the '
    'configured cost_categories file, then of pipelines/data/cost_categories.csv, wins; no match is other. A '
    'manual_costs line keeps the cost_category of its file.';
comment on column focus_line_items.x_InstanceType is
    'Instance or machine type of a compute line (e.g. p5.48xlarge, a3-highgpu-8g); NULL otherwise.';
comment on column focus_line_items.x_GpuCount is
    'GPUs of that instance type (the configured gpu_instance_types, then pipelines/data/gpu_instance_types.csv); '
    'NULL when it has none or is unknown.';
comment on column focus_line_items.x_GpuHours is
    'GPU-hours the line bought: AWS (EC2 and SageMaker) instance-hour usage x the instance type''s GPUs; GCP GPU '
    'SKU usage seconds / 3600; FOCUS Usage lines in hours x the GPUs (Google Cloud: GPU SKU hours); 0 for every '
    'other line.';
comment on column focus_line_items.x_Credits is
    'GCP: credit type (credit name where the table has no types) to the sum of the line''s credits of that type, '
    'negative, in BillingCurrency. NULL for other sources.';
comment on column focus_line_items.x_CurrencyConversionRate is
    'GCP: the export''s currency_conversion_rate (cost / rate = USD), kept, never applied: amounts stay in '
    'BillingCurrency. NULL for other sources.';
comment on column focus_line_items.x_SystemLabels is
    'GCP: the export''s system_labels (the machine type among them), kept apart from Tags. NULL for other sources.';
comment on column focus_line_items.x_ProviderPricingUnit is
    'PricingUnit as the provider''s export writes it (e.g. GB-Mo, byte-seconds), before mapping onto FOCUS units.';
comment on column focus_line_items.x_ProviderConsumedUnit is
    'ConsumedUnit as the provider''s export writes it, before mapping onto FOCUS units.';
comment on column focus_line_items.x_ExtraColumns is
    'FOCUS files: each column of the file that is not a column of this table (its own x_ columns, other FOCUS '
    'versions'' columns), name to value as text. NULL for other sources.';
comment on column focus_line_items.x_DerivedFrom is
    'On a row RunLedger adds beside a provider line, that line''s x_LineItemKey: the unused part of an AWS Savings '
    'Plan or Reserved Instance fee as a Usage row of its own (CommitmentDiscountStatus Unused, BilledCost 0); the '
    'used and unused parts of a GCP commitment fee (Used / Unused). NULL '
    'on every line of the export itself: rows = raw rows + rows with x_DerivedFrom.';
comment on column focus_line_items.x_SplitParentResourceId is
    'AWS split cost allocation data: on a row of an EKS pod or ECS task (its ResourceId the pod or task), the '
    'EC2 instance it ran on, as that instance''s own line has it in ResourceId (e.g. i-0abc); NULL on every other '
    'row.';
comment on column focus_line_items.x_SplitCost is
    'AWS split cost allocation data: the part of the parent instance''s amortized cost the pod or task reserved '
    'in the charge period (split_line_item_split_cost, before discounts: every split row has it, the net column '
    'appears only in months with a discount); a weight among the parent''s pods. The row''s own BilledCost and '
    'EffectiveCost stay as AWS bills them (0): the parent line carries the cost. NULL on rows without split data.';
comment on column focus_line_items.x_SplitUnusedCost is
    'AWS split cost allocation data: the part of the parent instance''s unreserved capacity AWS gives the pod or '
    'task (split_line_item_unused_cost, before discounts); per parent and charge period, x_SplitCost plus '
    'x_SplitUnusedCost over its pods is the parent''s amortized cost. NULL on rows without split data.';
