-- The FOCUS 1.0-1.2 → focus_line_items mapping (typing and RunLedger's x_ extensions), run by DuckDB
-- on a FOCUS export's files as polars types them (pipelines/sources/focus_files.py:
-- timestamps in UTC, Tags as key/value entries, everything else as the file has it). Created per
-- connection (temporary), after sql/staging/macros.sql, whose tables a load fills, and
-- sql/schema/focus_line_items.sql, whose columns a FOCUS file carries.

-- name: create
-- The mapping's temporary tables and macros.
-- Every column a typed file can have, typed, without rows: focus_line_items' columns (of which a
-- file has the FOCUS ones and the x_ columns polars reads into their own column), Tags and the
-- file's other columns (`_extra_columns`) as entries. A delivery is read as this table
-- `union all by name` its files, so a column a file lacks (another FOCUS version) is NULL. A money
-- column stays as the file has it (text from CSV, DOUBLE from Parquet): `money` converts either.
-- `_unparsed_timestamp` is a row's first timestamp text polars could not read, and its column;
-- `_unparsed_key_value` its Tags or SkuPriceDetails text when not a JSON object of key-value pairs.
create or replace temp table focus_columns as
with focus_columns as (
    select * from focus_line_items
)

select
    * replace (cast(null as struct(key varchar, value varchar)[]) as Tags),
    cast(null as struct(key varchar, value varchar)[]) as _extra_columns,
    cast(null as struct(column_name varchar, value varchar)) as _unparsed_timestamp,
    cast(null as struct(column_name varchar, value varchar)) as _unparsed_key_value
from focus_columns
where false;

-- The delivery's rows (with every FOCUS column, missing ones NULL) and their place in their file;
-- only those of the billing period when the files hold several (`select_period`).
create or replace temp macro focus_delivery_rows(files, billing_period, select_period) as table
    select *
    from focus_columns
    union all by name
    select *
    from read_parquet(files, filename = true, file_row_number = true, union_by_name = true, hive_partitioning = false)
    where not select_period or date_trunc('month', BillingPeriodStart) = billing_period;

-- The instance type of a FOCUS row: the file's x_InstanceType, else SkuPriceDetails' InstanceType
-- (FOCUS 1.2), else the VM size of Azure's x_SkuDetails (`ServiceType`), else the instance type a
-- ChargeDescription names as AWS writes it ("$1.624 per On Demand Linux g5.4xlarge Instance Hour",
-- SageMaker's "ml.p5.48xlarge").
create or replace temp macro focus_instance_type(x_instance_type, sku_price_details, extra_columns, description) as
    coalesce(
        blank(x_instance_type),
        blank(json_extract_string(sku_price_details, '$.InstanceType')),
        blank(try(json_extract_string(extra_columns['x_SkuDetails'], '$.ServiceType'))),
        blank(regexp_extract(
            description,
            '(?i)\b((?:ml\.)?[a-z][a-z0-9-]*\.(?:[0-9]*xlarge|large|medium|small|micro|nano|metal(?:-[0-9]+xl)?))\b',
            1
        ))
    );

-- GPU-hours of a FOCUS row of Usage (not a commitment's unused part) measured in hours: a GPU SKU's
-- hours as they are (Google bills a VM's GPUs as SKUs of their own, "Nvidia H100 80GB GPU running
-- in Americas"), else instance hours × the GPUs of the instance type (other providers); else 0.
create or replace temp macro focus_gpu_hours(
    charge_category, commitment_status, consumed_unit, consumed_quantity, provider, description, gpus
) as
    case
        when charge_category is distinct from 'Usage'
            or commitment_status is not distinct from 'Unused'
            or lower(coalesce(consumed_unit, '')) not in ('hours', 'hour', 'hrs', 'hr')
            then cast(0 as decimal(38, 10))
        when regexp_matches(coalesce(provider, ''), '(?i)^google')
            then case
                when regexp_matches(coalesce(description, ''), '(?i)\bGPU\b')
                    then cast(coalesce(consumed_quantity, 0) as decimal(38, 10))
                else cast(0 as decimal(38, 10))
            end
        when gpus is not null then cast(coalesce(consumed_quantity, 0) * gpus as decimal(38, 10))
        else cast(0 as decimal(38, 10))
    end;

-- The delivery's rows as `focus_line_items` rows: text trimmed (blank is NULL), money converted,
-- the file's other columns in x_ExtraColumns, x_LineItemKey `source|file|row`, x_CostCategory
-- from the rules. Needs `delivery_files` and
-- `line_categories` filled (sql/staging/lookups.sql, cost_categories.sql).
create or replace temp macro focus_file_rows(
    files, billing_period, select_period, source_name, source_format, ingested_at
) as table
with delivery as (
    select * from focus_delivery_rows(files, billing_period, select_period)
),

file_locations as (
    select * from delivery_files
),

mapped as (
    select
        delivery.*,
        coalesce(file_locations.location, delivery.filename) as source_file,
        focus_instance_type(
            delivery.x_InstanceType,
            delivery.SkuPriceDetails,
            map_from_entries(coalesce(delivery._extra_columns, [])),
            delivery.ChargeDescription
        ) as instance_type
    from delivery
    left join file_locations on delivery.filename = file_locations.file
),

final as (
    select
        blank(mapped.BillingAccountId) as BillingAccountId,
        blank(mapped.BillingAccountName) as BillingAccountName,
        blank(mapped.BillingCurrency) as BillingCurrency,
        mapped.BillingPeriodStart,
        mapped.BillingPeriodEnd,
        mapped.ChargePeriodStart,
        mapped.ChargePeriodEnd,
        blank(mapped.ChargeCategory) as ChargeCategory,
        blank(mapped.ChargeClass) as ChargeClass,
        blank(mapped.ChargeDescription) as ChargeDescription,
        blank(mapped.ChargeFrequency) as ChargeFrequency,
        blank(mapped.ProviderName) as ProviderName,
        blank(mapped.PublisherName) as PublisherName,
        blank(mapped.InvoiceIssuerName) as InvoiceIssuerName,
        blank(mapped.InvoiceId) as InvoiceId,
        blank(mapped.ServiceName) as ServiceName,
        blank(mapped.ServiceCategory) as ServiceCategory,
        blank(mapped.SubAccountId) as SubAccountId,
        blank(mapped.SubAccountName) as SubAccountName,
        blank(mapped.RegionId) as RegionId,
        blank(mapped.AvailabilityZone) as AvailabilityZone,
        blank(mapped.ResourceId) as ResourceId,
        blank(mapped.ResourceName) as ResourceName,
        blank(mapped.ResourceType) as ResourceType,
        blank(mapped.SkuId) as SkuId,
        blank(mapped.SkuPriceId) as SkuPriceId,
        blank(mapped.PricingCategory) as PricingCategory,
        money(mapped.PricingQuantity) as PricingQuantity,
        blank(mapped.PricingUnit) as PricingUnit,
        money(mapped.ConsumedQuantity) as ConsumedQuantity,
        blank(mapped.ConsumedUnit) as ConsumedUnit,
        money(mapped.ListUnitPrice) as ListUnitPrice,
        money(mapped.ListCost) as ListCost,
        money(mapped.ContractedCost) as ContractedCost,
        money(mapped.EffectiveCost) as EffectiveCost,
        money(mapped.BilledCost) as BilledCost,
        blank(mapped.CommitmentDiscountId) as CommitmentDiscountId,
        blank(mapped.CommitmentDiscountType) as CommitmentDiscountType,
        blank(mapped.CommitmentDiscountStatus) as CommitmentDiscountStatus,
        map_from_entries(coalesce(mapped.Tags, [])) as Tags,
        blank(mapped.BillingAccountType) as BillingAccountType,
        blank(mapped.SubAccountType) as SubAccountType,
        blank(mapped.RegionName) as RegionName,
        blank(mapped.ServiceSubcategory) as ServiceSubcategory,
        blank(mapped.SkuMeter) as SkuMeter,
        blank(mapped.SkuPriceDetails) as SkuPriceDetails,
        money(mapped.ContractedUnitPrice) as ContractedUnitPrice,
        blank(mapped.PricingCurrency) as PricingCurrency,
        money(mapped.PricingCurrencyContractedUnitPrice) as PricingCurrencyContractedUnitPrice,
        money(mapped.PricingCurrencyEffectiveCost) as PricingCurrencyEffectiveCost,
        money(mapped.PricingCurrencyListUnitPrice) as PricingCurrencyListUnitPrice,
        blank(mapped.CommitmentDiscountCategory) as CommitmentDiscountCategory,
        blank(mapped.CommitmentDiscountName) as CommitmentDiscountName,
        money(mapped.CommitmentDiscountQuantity) as CommitmentDiscountQuantity,
        blank(mapped.CommitmentDiscountUnit) as CommitmentDiscountUnit,
        blank(mapped.CapacityReservationId) as CapacityReservationId,
        blank(mapped.CapacityReservationStatus) as CapacityReservationStatus,
        concat_ws('|', source_name, mapped.source_file, mapped.file_row_number) as x_LineItemKey,
        source_name as x_SourceName,
        source_format as x_SourceFormat,
        mapped.source_file as x_SourceFile,
        cast(ingested_at as timestamp) as x_IngestedAt,
        categories.cost_category as x_CostCategory,
        mapped.instance_type as x_InstanceType,
        gpu_instance_types.gpus as x_GpuCount,
        focus_gpu_hours(
            blank(mapped.ChargeCategory),
            blank(mapped.CommitmentDiscountStatus),
            blank(mapped.ConsumedUnit),
            money(mapped.ConsumedQuantity),
            blank(mapped.ProviderName),
            blank(mapped.ChargeDescription),
            gpu_instance_types.gpus
        ) as x_GpuHours,
        cast(null as map(varchar, decimal(38, 10))) as x_Credits,
        cast(null as decimal(38, 10)) as x_CurrencyConversionRate,
        cast(null as map(varchar, varchar)) as x_SystemLabels,
        blank(mapped.x_ProviderPricingUnit) as x_ProviderPricingUnit,
        blank(mapped.x_ProviderConsumedUnit) as x_ProviderConsumedUnit,
        map_from_entries(coalesce(mapped._extra_columns, [])) as x_ExtraColumns
    from mapped
    left join line_categories as categories
        on blank(mapped.ProviderName) is not distinct from categories.provider
        and blank(mapped.ServiceName) is not distinct from categories.service
        and blank(mapped.ServiceCategory) is not distinct from categories.service_category
        and blank(mapped.ChargeDescription) is not distinct from categories.detail
        and blank(mapped.ChargeCategory) is not distinct from categories.charge_category
    left join gpu_instance_types on gpu_instance_key(mapped.instance_type) = gpu_instance_types.instance_type
)

select * from final;

-- name: inputs
-- A FOCUS delivery's own provider, service, service category, charge description and category.
insert into category_inputs
select distinct
    blank(ProviderName) as provider,
    blank(ServiceName) as service,
    blank(ServiceCategory) as service_category,
    blank(ChargeDescription) as detail,
    blank(ChargeCategory) as charge_category
from focus_delivery_rows($files, $billing_period, $select_period);

-- name: insert
-- Inserts a FOCUS delivery's rows, typed and extended by `focus_file_rows`.
insert into focus_line_items by name
select * from focus_file_rows($files, $billing_period, $select_period, $source_name, $source_format, $ingested_at);

-- name: staged
-- The delivery's FOCUS rows written to a Parquet file as the mapping computes them (key-value
-- maps as entry lists), outside the warehouse: the mapping's output to inspect.
copy (
    select * replace (
        map_entries(Tags) as Tags,
        map_entries(x_Credits) as x_Credits,
        map_entries(x_SystemLabels) as x_SystemLabels
    )
    from focus_file_rows($files, $billing_period, $select_period, $source_name, $source_format, $ingested_at)
) to $target (format parquet);
