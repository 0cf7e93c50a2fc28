-- The GCP Cloud Billing export (BigQuery schema) → FOCUS 1.2 mapping, run by DuckDB on the export's
-- Parquet: files of the export, NDJSON files typed by polars (pipelines/ingest/formats/
-- gcp_billing.py) or a BigQuery snapshot. Created per connection (temporary), after
-- sql/staging/macros.sql, whose tables a load fills.
--
-- Net cost = cost + Σ credits.amount is both BilledCost and EffectiveCost; the credits are also
-- kept per credit type in x_Credits. The billing period is `invoice.month`, a Pacific-time month:
-- BillingPeriodStart is its first midnight in America/Los_Angeles, stored in UTC. Tags are
-- `labels`, then `project.labels` for keys the resource does not set; `system_labels` stay out of
-- Tags, in x_SystemLabels. Amounts stay in the row's currency (`currency_conversion_rate` is kept
-- in x_CurrencyConversionRate, never applied).

-- Every field the mapping reads, typed, without rows: a delivery is read as this table
-- `union all by name` its files, so a field an older table lacks is NULL instead of an error. A
-- money field stays as the file has it (text from NDJSON, DOUBLE from BigQuery): `money` converts
-- either. Timestamps are UTC, with or without a time zone (`utc_timestamp`).
create or replace temp table gcp_columns (
    billing_account_id varchar,
    service struct(id varchar, description varchar),
    sku struct(id varchar, description varchar),
    usage_start_time timestamp,
    usage_end_time timestamp,
    project struct(id varchar, number varchar, name varchar, labels struct(key varchar, value varchar)[]),
    labels struct(key varchar, value varchar)[],
    system_labels struct(key varchar, value varchar)[],
    location struct(location varchar, country varchar, region varchar, zone varchar),
    resource struct(name varchar, global_name varchar),
    export_time timestamp,
    cost decimal(38, 10),
    currency varchar,
    currency_conversion_rate decimal(38, 10),
    usage struct(
        amount decimal(38, 10), unit varchar, amount_in_pricing_units decimal(38, 10), pricing_unit varchar
    ),
    credits struct(name varchar, amount decimal(38, 10), full_name varchar, id varchar, type varchar)[],
    invoice struct(month varchar),
    cost_type varchar,
    adjustment_info struct(id varchar, description varchar, mode varchar, type varchar),
    cost_at_list decimal(38, 10),
    seller_name varchar,
    -- a BigQuery snapshot's rows carry their key here (sql/staging/gcp_snapshot_keys.sql)
    _line_key varchar,
    -- typed NDJSON rows name their file and their place in it here
    _source_file varchar,
    _row bigint
);

-- FOCUS ChargeCategory of a cost_type.
create or replace temp macro gcp_charge_category(cost_type) as
    case coalesce(cost_type, 'regular')
        when 'regular' then 'Usage'
        when 'tax' then 'Tax'
        else 'Adjustment'
    end;

-- The first midnight of an invoice month (YYYYMM) in Pacific time, as a UTC timestamp.
create or replace temp macro gcp_month_start(invoice_month, months_after) as
    timezone('UTC', timezone('America/Los_Angeles', strptime(invoice_month, '%Y%m') + to_months(months_after)));

-- Key/value entries, the first of each key kept (project labels follow the resource's own).
create or replace temp macro gcp_first_per_key(entries) as
    case
        when list_unique(list_transform(entries, entry -> entry.key)) = len(entries) then entries
        else list_filter(
            entries, (entry, position) -> list_position(list_transform(entries, e -> e.key), entry.key) = position
        )
    end;

-- The credit type a credit counts under in x_Credits (its name when a table has no type).
create or replace temp macro gcp_credit_key(credit) as
    coalesce(blank(credit.type), blank(credit.name), 'UNKNOWN');

-- The delivery's rows of one invoice month (YYYYMM), with every mapped field (missing ones NULL)
-- and their place in their file.
create or replace temp macro gcp_delivery_rows(files, invoice_month) as table
    select *
    from gcp_columns
    union all by name
    select *
    from read_parquet(files, filename = true, file_row_number = true, union_by_name = true, hive_partitioning = false)
    where invoice.month = invoice_month;

-- The delivery's rows as `focus_line_items` rows. A row's key is `source|file|row` (its place in
-- the file, so new files leave it as it is), or the key its snapshot gives it. Needs
-- `delivery_files` and `line_categories` filled (sql/staging/lookups.sql, cost_categories.sql).
create or replace temp macro gcp_focus_rows(files, invoice_month, source_name, ingested_at) as table
with delivery as (
    select * from gcp_delivery_rows(files, invoice_month)
),

file_locations as (
    select * from delivery_files
),

mapped as (
    select
        delivery.*,
        coalesce(delivery._source_file, file_locations.location, delivery.filename) as source_file,
        coalesce(delivery._row, delivery.file_row_number) as source_row,
        gcp_charge_category(delivery.cost_type) as charge_category,
        money(delivery.cost) + coalesce(list_sum(list_transform(delivery.credits, credit -> money(credit.amount))), 0)
            as net_cost,
        list_filter(delivery.system_labels, label -> label.key = 'compute.googleapis.com/machine_spec')[1].value
            as instance_type,
        -- hours of GPU SKUs' usage (billed in seconds); the VM's core and memory SKUs carry none
        regexp_matches(coalesce(delivery.sku.description, ''), '(?i)\bGPU\b')
        and not regexp_matches(coalesce(delivery.sku.description, ''), '(?i)^commitment')
        and lower(coalesce(delivery.usage.unit, '')) = 'seconds'
        and coalesce(delivery.cost_type, 'regular') = 'regular' as is_gpu_usage
    from delivery
    left join file_locations on delivery.filename = file_locations.file
),

final as (
    select
        mapped.billing_account_id as BillingAccountId,
        cast(null as varchar) as BillingAccountName,
        mapped.currency as BillingCurrency,
        -- every row's invoice.month is the delivery's
        gcp_month_start(invoice_month, 0) as BillingPeriodStart,
        gcp_month_start(invoice_month, 1) as BillingPeriodEnd,
        utc_timestamp(mapped.usage_start_time) as ChargePeriodStart,
        utc_timestamp(mapped.usage_end_time) as ChargePeriodEnd,
        mapped.charge_category as ChargeCategory,
        -- adjustments that restate usage already billed; goodwill, SLA and other general
        -- adjustments are new charges, not corrections
        case
            when coalesce(
                mapped.adjustment_info.type in ('USAGE_CORRECTION', 'PRICE_CORRECTION', 'METADATA_CORRECTION')
                or mapped.adjustment_info.mode in (
                    'PARTIAL_CORRECTION', 'COMPLETE_NEGATION', 'COMPLETE_NEGATION_WITH_REMONETIZATION'
                ),
                false
            ) then 'Correction'
        end as ChargeClass,
        mapped.sku.description as ChargeDescription,
        case when mapped.cost_type = 'tax' then 'One-Time' else 'Usage-Based' end as ChargeFrequency,
        'Google Cloud' as ProviderName,
        coalesce(blank(mapped.seller_name), 'Google') as PublisherName,
        'Google' as InvoiceIssuerName,
        cast(null as varchar) as InvoiceId,
        mapped.service.description as ServiceName,
        categories.default_service_category as ServiceCategory,
        mapped.project.id as SubAccountId,
        mapped.project.name as SubAccountName,
        blank(mapped.location.region) as RegionId,
        blank(mapped.location.zone) as AvailabilityZone,
        coalesce(blank(mapped.resource.global_name), blank(mapped.resource.name)) as ResourceId,
        blank(mapped.resource.name) as ResourceName,
        cast(null as varchar) as ResourceType,
        mapped.sku.id as SkuId,
        cast(null as varchar) as SkuPriceId,
        cast(null as varchar) as PricingCategory,
        money(mapped.usage.amount_in_pricing_units) as PricingQuantity,
        mapped.usage.pricing_unit as PricingUnit,
        money(mapped.usage.amount) as ConsumedQuantity,
        mapped.usage.unit as ConsumedUnit,
        cast(null as decimal(38, 10)) as ListUnitPrice,
        money(mapped.cost_at_list) as ListCost,
        money(mapped.cost) as ContractedCost,
        mapped.net_cost as EffectiveCost,
        mapped.net_cost as BilledCost,
        cast(null as varchar) as CommitmentDiscountId,
        cast(null as varchar) as CommitmentDiscountType,
        cast(null as varchar) as CommitmentDiscountStatus,
        map_from_entries(
            gcp_first_per_key(list_concat(coalesce(mapped.labels, []), coalesce(mapped.project.labels, [])))
        ) as Tags,
        concat_ws('|', source_name, coalesce(mapped._line_key, concat_ws('|', mapped.source_file, mapped.source_row)))
            as x_LineItemKey,
        source_name as x_SourceName,
        'gcp_billing' as x_SourceFormat,
        mapped.source_file as x_SourceFile,
        cast(ingested_at as timestamp) as x_IngestedAt,
        categories.cost_category as x_CostCategory,
        mapped.instance_type as x_InstanceType,
        gpu_instance_types.gpus as x_GpuCount,
        case
            when mapped.is_gpu_usage then coalesce(money_quotient(money(mapped.usage.amount), 3600), 0)
            else cast(0 as decimal(38, 10))
        end as x_GpuHours,
        -- Σ credit amounts per credit type, the types in order
        map_from_entries(list_transform(
            list_sort(list_distinct(list_transform(coalesce(mapped.credits, []), credit -> gcp_credit_key(credit)))),
            credit_type -> {
                'key': credit_type,
                'value': coalesce(
                    list_sum(list_transform(
                        list_filter(mapped.credits, credit -> gcp_credit_key(credit) = credit_type),
                        credit -> money(credit.amount)
                    )),
                    0
                )
            }
        )) as x_Credits,
        money(mapped.currency_conversion_rate) as x_CurrencyConversionRate,
        map_from_entries(gcp_first_per_key(coalesce(mapped.system_labels, []))) as x_SystemLabels
    from mapped
    left join line_categories as categories
        on categories.provider = 'Google Cloud'
        and mapped.service.description is not distinct from categories.service
        and categories.service_category is null
        and mapped.sku.description is not distinct from categories.detail
        and mapped.charge_category is not distinct from categories.charge_category
    left join gpu_instance_types
        on gpu_instance_types.provider = 'Google Cloud'
        and lower(mapped.instance_type) = gpu_instance_types.instance_type
)

select * from final;
