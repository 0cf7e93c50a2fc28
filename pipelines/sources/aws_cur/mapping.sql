-- The CUR 2.0 → FOCUS 1.2 mapping, run by DuckDB straight from a delivery's Parquet files (a
-- legacy CUR delivery is first converted to CUR 2.0 columns). Created per connection (temporary),
-- after sql/staging/macros.sql, whose tables a load fills.

-- name: create
-- The mapping's temporary tables and macros.
-- Every column the mapping reads, typed, without rows: a delivery is read as this table
-- `union all by name` its files, so a column a file lacks (older exports, schema drift) is NULL
-- instead of an error. A money column united with a file's DOUBLE is DOUBLE (CUR 2.0 writes
-- them so), with a legacy delivery's text VARCHAR (the text AWS wrote): `money` converts either.
create or replace temp table cur2_columns (
    bill_billing_entity varchar,
    bill_billing_period_end_date timestamp,
    bill_billing_period_start_date timestamp,
    bill_invoice_id varchar,
    bill_invoicing_entity varchar,
    bill_payer_account_id varchar,
    bill_payer_account_name varchar,
    capacity_reservation_capacity_reservation_a_r_n varchar,
    capacity_reservation_capacity_reservation_status varchar,
    line_item_availability_zone varchar,
    line_item_currency_code varchar,
    line_item_line_item_description varchar,
    line_item_line_item_type varchar,
    line_item_net_unblended_cost decimal(38, 10),
    line_item_product_code varchar,
    line_item_resource_id varchar,
    line_item_tax_type varchar,
    line_item_unblended_cost decimal(38, 10),
    line_item_unblended_rate varchar,
    line_item_usage_account_id varchar,
    line_item_usage_account_name varchar,
    line_item_usage_amount decimal(38, 10),
    line_item_usage_end_date timestamp,
    line_item_usage_start_date timestamp,
    line_item_usage_type varchar,
    pricing_currency varchar,
    pricing_public_on_demand_cost decimal(38, 10),
    pricing_public_on_demand_rate varchar,
    pricing_rate_id varchar,
    pricing_term varchar,
    pricing_unit varchar,
    product map(varchar, varchar),
    product_gpu varchar,
    product_instance_family varchar,
    product_instance_type varchar,
    product_instance_type_family varchar,
    product_location varchar,
    product_memory varchar,
    product_operating_system varchar,
    product_product_name varchar,
    product_region varchar,
    product_region_code varchar,
    product_servicecode varchar,
    product_sku varchar,
    product_storage_class varchar,
    product_vcpu varchar,
    reservation_effective_cost decimal(38, 10),
    reservation_net_effective_cost decimal(38, 10),
    reservation_net_unused_amortized_upfront_fee_for_billing_period decimal(38, 10),
    reservation_net_unused_recurring_fee decimal(38, 10),
    reservation_reservation_a_r_n varchar,
    reservation_unused_amortized_upfront_fee_for_billing_period decimal(38, 10),
    reservation_unused_quantity decimal(38, 10),
    reservation_unused_recurring_fee decimal(38, 10),
    resource_tags map(varchar, varchar),
    -- a legacy delivery's tag columns, converted to key/value entries
    resource_tag_entries struct(key varchar, value varchar)[],
    savings_plan_net_savings_plan_effective_cost decimal(38, 10),
    savings_plan_savings_plan_a_r_n varchar,
    savings_plan_savings_plan_effective_cost decimal(38, 10),
    savings_plan_total_commitment_to_date decimal(38, 10),
    savings_plan_used_commitment decimal(38, 10),
    -- split cost allocation data (EKS pods, ECS tasks): only exports that include it have them
    split_line_item_parent_resource_id varchar,
    split_line_item_split_cost decimal(38, 10),
    split_line_item_unused_cost decimal(38, 10),
    -- a legacy delivery's rows name their original file and their row in it (0-based) here
    _source_file varchar,
    _row bigint
);

-- FOCUS ChargeCategory; a refund keeps the category of what it refunds (FOCUS 1.2): tax (the line
-- has a tax type), a commitment purchase (Savings Plan product or a reservation), or usage.
create or replace temp macro cur2_charge_category(line_type, product_code, reservation_arn, tax_type) as
    case
        when line_type = 'Refund' then
            case
                when blank(tax_type) is not null then 'Tax'
                when coalesce(product_code = 'ComputeSavingsPlans', false) or blank(reservation_arn) is not null
                    then 'Purchase'
                else 'Usage'
            end
        when line_type in (
            'Usage', 'DiscountedUsage', 'SavingsPlanCoveredUsage', 'SavingsPlanNegation', 'BundledDiscount',
            'EdpDiscount', 'PrivateRateDiscount', 'Discount'
        ) then 'Usage'
        when line_type in ('SavingsPlanUpfrontFee', 'SavingsPlanRecurringFee', 'RIFee', 'Fee') then 'Purchase'
        when line_type = 'Tax' then 'Tax'
        when line_type = 'Credit' then 'Credit'
        else 'Adjustment'
    end;

-- resource_tags (or a legacy delivery's tag entries) as Tags: keys as AWS spells them, entries
-- without a value dropped. Most maps have none, and are kept as they are: looking for a blank
-- value among the map's values joined by NUL costs a fifth of rebuilding every map (1.8 s vs
-- 8.4 s for 2.5M lines).
create or replace temp macro cur2_tags(resource_tags, resource_tag_entries) as
    case
        when list_aggregate(map_values(resource_tags), 'count') = cardinality(resource_tags)
            and not regexp_matches(
                array_to_string(map_values(resource_tags), chr(0)), '(^|\x00)[\s\x0B\x{85}\p{Z}]*(\x00|$)'
            )
            then resource_tags
        when resource_tags is null and resource_tag_entries is null then cast(map() as map(varchar, varchar))
        else map_from_entries(list_filter(
            coalesce(map_entries(resource_tags), resource_tag_entries),
            lambda tag: blank(tag.value) is not null
        ))
    end;

create or replace temp macro cur2_service_key(product_code, servicecode) as
    coalesce(blank(product_code), blank(servicecode));

-- The delivery's rows with every mapped column (missing ones NULL) and their place in it.
create or replace temp macro cur2_delivery_rows(files) as table
    select *
    from cur2_columns
    union all by name
    select *
    from read_parquet(files, filename = true, file_row_number = true, union_by_name = true, hive_partitioning = false);

-- SkuPriceDetails of a CUR line: the FOCUS-defined SKU price properties its product attributes
-- give, as JSON object text without the properties the line lacks; NULL when it has none.
create or replace temp macro cur2_sku_price_details(
    instance_type, instance_series, vcpu, gpu, memory, operating_system, storage_class
) as
    nullif(
        cast(json_merge_patch('{}', json_object(
            'InstanceType', instance_type,
            'InstanceSeries', instance_series,
            'CoreCount', try_cast(vcpu as integer),
            'GpuCount', try_cast(gpu as integer),
            'MemorySize',
            try_cast(nullif(regexp_extract(memory, '^\s*([0-9]+(?:\.[0-9]+)?)\s*GiB\s*$', 1), '') as double),
            'OperatingSystem', operating_system,
            'StorageClass', storage_class
        )) as varchar),
        '{}'
    );

-- What a CUR line's product (its SKU and attributes) gives, once per distinct product (`products`
-- fills it): SkuId, the product's name, RegionId and RegionName, the instance type and its GPUs
-- (x_GpuCount) and the SkuPriceDetails of a line with a price. The product columns are the key,
-- NULL matching NULL.
create or replace temp table cur2_products (
    product map(varchar, varchar),
    product_sku varchar,
    product_product_name varchar,
    product_region_code varchar,
    product_region varchar,
    product_location varchar,
    product_instance_type varchar,
    product_instance_type_family varchar,
    product_vcpu varchar,
    product_gpu varchar,
    product_memory varchar,
    product_operating_system varchar,
    product_storage_class varchar,
    sku_id varchar,
    product_name varchar,
    region_id varchar,
    region_name varchar,
    instance_type varchar,
    gpus integer,
    sku_price_details varchar
);

-- The delivery's rows as `focus_line_items` rows, plus a row of its own for the unused part of each
-- Savings Plan or Reserved Instance fee (x_DerivedFrom: the fee's x_LineItemKey).
-- BilledCost = coalesce(net unblended, unblended). EffectiveCost follows the amortization rule of
-- AWS's Cloud Intelligence Dashboards: Savings-Plan-covered usage at its SP effective cost,
-- negations and upfront fees 0, RI usage at its reservation effective cost; the fees themselves
-- are 0 (FOCUS: a purchase covering future usage) and their unused part is the EffectiveCost of
-- the Unused row, so Σ EffectiveCost is the amortized total. Needs `delivery_files`,
-- `unit_names` and `line_categories` filled (sql/staging/lookups.sql, cost_categories.sql).
create or replace temp macro cur2_focus_rows(
    files, source_name, period_label, execution_id, source_format, ingested_at
) as table
with delivery as (
    select * from cur2_delivery_rows(files)
),

file_locations as (
    select * from delivery_files
),

-- what a line's usage type tells, once per distinct usage type: EC2 instance hours, and
-- SageMaker's (`USE1-Train:ml.p5.48xlarge`, `Host:ml.…`), and Spot usage
categories as (
    select
        *,
        regexp_matches(coalesce(detail, ''), '(?i)(BoxUsage|DedicatedUsage|HeavyUsage|SpotUsage|:ml\.)')
            as instance_hours,
        contains(detail, 'SpotUsage') as spot_usage
    from line_categories
),

products as (
    select * from cur2_products
),

units as (
    select * from unit_names
),

mapped as (
    select
        delivery.*,
        file_locations.location,
        file_locations.first_row,
        cur2_service_key(line_item_product_code, product_servicecode) as service_key,
        blank(line_item_usage_type) as detail,
        cur2_charge_category(
            line_item_line_item_type, line_item_product_code, reservation_reservation_a_r_n, line_item_tax_type
        ) as charge_category,
        money(line_item_usage_amount) as usage_amount,
        coalesce(money(line_item_net_unblended_cost), money(line_item_unblended_cost)) as billed_cost,
        blank(savings_plan_savings_plan_a_r_n) as savings_plan_arn,
        blank(reservation_reservation_a_r_n) as reservation_arn,
        blank(pricing_unit) as provider_unit,
        blank(pricing_currency) as pricing_currency_code,
        line_item_line_item_type in ('Usage', 'DiscountedUsage', 'SavingsPlanCoveredUsage') as is_usage,
        -- the commitment a fee bought and did not use in its charge period
        case line_item_line_item_type
            when 'SavingsPlanRecurringFee'
                then money(savings_plan_total_commitment_to_date) - money(savings_plan_used_commitment)
            when 'RIFee' then
                coalesce(
                    money(reservation_net_unused_amortized_upfront_fee_for_billing_period),
                    money(reservation_unused_amortized_upfront_fee_for_billing_period),
                    0
                )
                + coalesce(
                    money(reservation_net_unused_recurring_fee), money(reservation_unused_recurring_fee), 0
                )
        end as unused_commitment_cost,
        -- in CommitmentDiscountUnit: the plan's currency, the reservation's hours
        case line_item_line_item_type
            when 'SavingsPlanRecurringFee'
                then money(savings_plan_total_commitment_to_date) - money(savings_plan_used_commitment)
            when 'RIFee' then
                coalesce(
                    money(reservation_unused_quantity),
                    case
                        when money(line_item_unblended_cost) <> 0
                            then cast(
                                money(line_item_usage_amount)
                                * coalesce(money(reservation_unused_recurring_fee), 0)
                                / money(line_item_unblended_cost) as decimal(38, 10)
                            )
                    end
                )
        end as unused_commitment_quantity
    from delivery
    left join file_locations on delivery.filename = file_locations.file
),

priced as (
    select
        mapped.*,
        case
            when charge_category = 'Tax' then null
            when provider_unit is null and charge_category not in ('Usage', 'Purchase') then null
            else usage_amount
        end as pricing_quantity,
        case
            when line_item_line_item_type = 'SavingsPlanNegation' then cast(0 as decimal(38, 10))
            else money(line_item_unblended_cost)
        end as contracted_cost,
        coalesce(savings_plan_arn, reservation_arn) as commitment_id
    from mapped
),

line_items as (
    select
        cast(bill_payer_account_id as varchar) as BillingAccountId,
        bill_payer_account_name as BillingAccountName,
        line_item_currency_code as BillingCurrency,
        bill_billing_period_start_date as BillingPeriodStart,
        bill_billing_period_end_date as BillingPeriodEnd,
        line_item_usage_start_date as ChargePeriodStart,
        line_item_usage_end_date as ChargePeriodEnd,
        priced.charge_category as ChargeCategory,
        -- a line for usage before its billing period corrects an already-invoiced period
        case when line_item_usage_start_date < bill_billing_period_start_date then 'Correction' end as ChargeClass,
        blank(line_item_line_item_description) as ChargeDescription,
        case
            when line_item_line_item_type in ('SavingsPlanRecurringFee', 'RIFee') then 'Recurring'
            when line_item_line_item_type in ('SavingsPlanUpfrontFee', 'Fee', 'Credit', 'Refund') then 'One-Time'
            else 'Usage-Based'
        end as ChargeFrequency,
        'Amazon Web Services' as ProviderName,
        case
            when bill_billing_entity = 'AWS Marketplace' then 'AWS Marketplace'
            else 'Amazon Web Services'
        end as PublisherName,
        blank(bill_invoicing_entity) as InvoiceIssuerName,
        blank(bill_invoice_id) as InvoiceId,
        coalesce(products.product_name, priced.service_key) as ServiceName,
        categories.default_service_category as ServiceCategory,
        cast(line_item_usage_account_id as varchar) as SubAccountId,
        line_item_usage_account_name as SubAccountName,
        products.region_id as RegionId,
        blank(line_item_availability_zone) as AvailabilityZone,
        blank(line_item_resource_id) as ResourceId,
        cast(null as varchar) as ResourceName,
        cast(null as varchar) as ResourceType,
        products.sku_id as SkuId,
        blank(pricing_rate_id) as SkuPriceId,
        case
            when line_item_line_item_type in ('SavingsPlanCoveredUsage', 'DiscountedUsage') then 'Committed'
            when coalesce(blank(pricing_term) = 'Spot' or categories.spot_usage, false)
                then 'Dynamic'
            else case blank(pricing_term)
                when 'OnDemand' then 'Standard'
                when 'Reserved' then 'Committed'
                when 'Spot' then 'Dynamic'
            end
        end as PricingCategory,
        priced.pricing_quantity as PricingQuantity,
        -- a Usage or Purchase line AWS gives no unit counts the item charged
        case when priced.pricing_quantity is not null then coalesce(units.focus_unit, 'Units') end
            as PricingUnit,
        case when is_usage then usage_amount end as ConsumedQuantity,
        case when is_usage then coalesce(units.focus_unit, 'Units') end as ConsumedUnit,
        case when priced.charge_category <> 'Tax' then money(pricing_public_on_demand_rate) end as ListUnitPrice,
        -- FOCUS: never NULL; 0 on negations (their covered usage carries the list cost), the billed
        -- amount on a tax, credit or adjustment AWS gives no public cost for
        case
            when line_item_line_item_type = 'SavingsPlanNegation' then cast(0 as decimal(38, 10))
            else coalesce(
                money(pricing_public_on_demand_cost),
                case when priced.charge_category in ('Tax', 'Credit', 'Adjustment') then billed_cost end,
                cast(0 as decimal(38, 10))
            )
        end as ListCost,
        priced.contracted_cost as ContractedCost,
        case
            when line_item_line_item_type in (
                'SavingsPlanRecurringFee', 'RIFee', 'SavingsPlanNegation', 'SavingsPlanUpfrontFee'
            ) then cast(0 as decimal(38, 10))
            when line_item_line_item_type = 'SavingsPlanCoveredUsage'
                then coalesce(
                    money(savings_plan_net_savings_plan_effective_cost),
                    money(savings_plan_savings_plan_effective_cost)
                )
            when line_item_line_item_type = 'DiscountedUsage'
                then coalesce(money(reservation_net_effective_cost), money(reservation_effective_cost))
            when line_item_line_item_type = 'Fee' and reservation_arn is not null then cast(0 as decimal(38, 10))
            when line_item_line_item_type = 'Refund' and line_item_product_code = 'ComputeSavingsPlans'
                then cast(0 as decimal(38, 10))
            else billed_cost
        end as EffectiveCost,
        billed_cost as BilledCost,
        priced.commitment_id as CommitmentDiscountId,
        case
            when savings_plan_arn is not null then 'Savings Plan'
            when reservation_arn is not null then 'Reservation'
        end as CommitmentDiscountType,
        case when priced.commitment_id is not null and priced.charge_category = 'Usage' then 'Used' end
            as CommitmentDiscountStatus,
        cur2_tags(resource_tags, resource_tag_entries) as Tags,
        case when bill_payer_account_id is not null then 'Payer Account' end as BillingAccountType,
        case when line_item_usage_account_id is not null then 'Linked Account' end as SubAccountType,
        products.region_name as RegionName,
        categories.service_subcategory as ServiceSubcategory,
        case when products.sku_id is not null then priced.detail end as SkuMeter,
        case when blank(pricing_rate_id) is not null then products.sku_price_details end as SkuPriceDetails,
        case
            when priced.charge_category = 'Tax' then null
            when line_item_line_item_type = 'SavingsPlanNegation' then cast(0 as decimal(38, 10))
            else coalesce(
                money(line_item_unblended_rate),
                case
                    when priced.charge_category in ('Usage', 'Purchase') and priced.pricing_quantity = 1
                        then priced.contracted_cost
                end
            )
        end as ContractedUnitPrice,
        priced.pricing_currency_code as PricingCurrency,
        case
            when priced.commitment_id is not null and priced.charge_category in ('Usage', 'Purchase') then
                case
                    when savings_plan_arn is null then usage_amount
                    when line_item_line_item_type = 'SavingsPlanCoveredUsage'
                        then money(savings_plan_savings_plan_effective_cost)
                    when line_item_line_item_type = 'SavingsPlanRecurringFee'
                        then money(savings_plan_total_commitment_to_date)
                    when line_item_line_item_type = 'SavingsPlanNegation' then cast(0 as decimal(38, 10))
                    else money(line_item_unblended_cost)
                end
        end as CommitmentDiscountQuantity,
        case
            when priced.commitment_id is null or priced.charge_category not in ('Usage', 'Purchase') then null
            when savings_plan_arn is not null then line_item_currency_code
            else 'Hours'
        end as CommitmentDiscountUnit,
        case
            when savings_plan_arn is not null then 'Spend'
            when reservation_arn is not null then 'Usage'
        end as CommitmentDiscountCategory,
        -- AWS gives its commitments no display name
        cast(null as varchar) as CommitmentDiscountName,
        blank(capacity_reservation_capacity_reservation_a_r_n) as CapacityReservationId,
        case
            when blank(capacity_reservation_capacity_reservation_a_r_n) is null then null
            when contains(lower(coalesce(capacity_reservation_capacity_reservation_status, '')), 'unused')
                or contains(coalesce(priced.detail, ''), 'Unused')
                then 'Unused'
            else 'Used'
        end as CapacityReservationStatus,
        concat_ws('|', source_name, period_label, execution_id, first_row + file_row_number) as x_LineItemKey,
        source_name as x_SourceName,
        source_format as x_SourceFormat,
        coalesce(_source_file, location) as x_SourceFile,
        cast(ingested_at as timestamp) as x_IngestedAt,
        categories.cost_category as x_CostCategory,
        products.instance_type as x_InstanceType,
        products.gpus as x_GpuCount,
        case
            when is_usage and categories.instance_hours and products.gpus is not null
                then cast(usage_amount * products.gpus as decimal(38, 10))
            else cast(0 as decimal(38, 10))
        end as x_GpuHours,
        cast(null as map(varchar, decimal(38, 10))) as x_Credits,
        cast(null as decimal(38, 10)) as x_CurrencyConversionRate,
        cast(null as map(varchar, varchar)) as x_SystemLabels,
        priced.provider_unit as x_ProviderPricingUnit,
        case when is_usage then priced.provider_unit end as x_ProviderConsumedUnit,
        cast(null as varchar) as x_DerivedFrom,
        blank(split_line_item_parent_resource_id) as x_SplitParentResourceId,
        -- money() of a NULL still takes its text path: only the pod rows carry split amounts
        case when split_line_item_parent_resource_id is not null then money(split_line_item_split_cost) end
            as x_SplitCost,
        case when split_line_item_parent_resource_id is not null then money(split_line_item_unused_cost) end
            as x_SplitUnusedCost,
        priced.unused_commitment_cost,
        priced.unused_commitment_quantity
    from priced
    left join categories
        on categories.provider = 'Amazon Web Services'
        and priced.service_key is not distinct from categories.service
        and categories.service_category is null
        and priced.detail is not distinct from categories.detail
        and priced.charge_category is not distinct from categories.charge_category
    left join products
        on priced.product is not distinct from products.product
        and priced.product_sku is not distinct from products.product_sku
        and priced.product_product_name is not distinct from products.product_product_name
        and priced.product_region_code is not distinct from products.product_region_code
        and priced.product_region is not distinct from products.product_region
        and priced.product_location is not distinct from products.product_location
        and priced.product_instance_type is not distinct from products.product_instance_type
        and priced.product_instance_type_family is not distinct from products.product_instance_type_family
        and priced.product_vcpu is not distinct from products.product_vcpu
        and priced.product_gpu is not distinct from products.product_gpu
        and priced.product_memory is not distinct from products.product_memory
        and priced.product_operating_system is not distinct from products.product_operating_system
        and priced.product_storage_class is not distinct from products.product_storage_class
    left join units on priced.provider_unit = units.provider_unit
),

-- Each line, and after a fee with unused commitment a second row (`unused`) for that part: a Usage
-- row as AWS's FOCUS export shows it, Unused, billed 0, its amortized cost the fee's unused part;
-- list, contracted and consumed nothing. (One pass over line_items: a second reference would
-- materialize all of it.)
copies as (
    select
        *,
        unnest(case when unused_commitment_cost <> 0 then [false, true] else [false] end) as unused
    from line_items
),

all_rows as (
    select
        * exclude (unused_commitment_cost, unused_commitment_quantity, unused) replace (
            case when unused then 'Usage' else ChargeCategory end as ChargeCategory,
            case when unused then 'Usage-Based' else ChargeFrequency end as ChargeFrequency,
            case
                when unused then 'Unused commitment: ' || coalesce(ChargeDescription, CommitmentDiscountType)
                else ChargeDescription
            end as ChargeDescription,
            case when unused then 'Committed' else PricingCategory end as PricingCategory,
            case when unused then unused_commitment_quantity else PricingQuantity end as PricingQuantity,
            case when unused then CommitmentDiscountUnit else PricingUnit end as PricingUnit,
            case when unused then null else ConsumedQuantity end as ConsumedQuantity,
            case when unused then null else ConsumedUnit end as ConsumedUnit,
            case when unused then cast(0 as decimal(38, 10)) else ListUnitPrice end as ListUnitPrice,
            case when unused then cast(0 as decimal(38, 10)) else ListCost end as ListCost,
            case when unused then cast(0 as decimal(38, 10)) else ContractedCost end as ContractedCost,
            case when unused then unused_commitment_cost else EffectiveCost end as EffectiveCost,
            case when unused then cast(0 as decimal(38, 10)) else BilledCost end as BilledCost,
            case when unused then 'Unused' else CommitmentDiscountStatus end as CommitmentDiscountStatus,
            case when unused then cast(0 as decimal(38, 10)) else ContractedUnitPrice end as ContractedUnitPrice,
            case when unused then unused_commitment_quantity else CommitmentDiscountQuantity end
                as CommitmentDiscountQuantity,
            case when unused then x_LineItemKey || '|unused' else x_LineItemKey end as x_LineItemKey,
            case when unused then cast(0 as decimal(38, 10)) else x_GpuHours end as x_GpuHours,
            case when unused then null else x_ProviderPricingUnit end as x_ProviderPricingUnit,
            case when unused then null else x_ProviderConsumedUnit end as x_ProviderConsumedUnit,
            case when unused then x_LineItemKey else x_DerivedFrom end as x_DerivedFrom
        )
    from copies
),

-- the amounts in PricingCurrency: AWS gives no conversion, so only where it is BillingCurrency
-- (the public rate is in PricingCurrency already)
final as (
    select
        *,
        case when PricingCurrency is not null then ListUnitPrice end as PricingCurrencyListUnitPrice,
        case when PricingCurrency = BillingCurrency then ContractedUnitPrice end as PricingCurrencyContractedUnitPrice,
        case when PricingCurrency = BillingCurrency then EffectiveCost end as PricingCurrencyEffectiveCost
    from all_rows
)

select * from final;

-- name: inputs
-- A CUR 2.0 delivery's (service, usage type, charge category); CUR 2.0 carries no service category.
insert into category_inputs
select distinct
    'Amazon Web Services' as provider,
    cur2_service_key(line_item_product_code, product_servicecode) as service,
    cast(null as varchar) as service_category,
    blank(line_item_usage_type) as detail,
    cur2_charge_category(
        line_item_line_item_type, line_item_product_code, reservation_reservation_a_r_n, line_item_tax_type
    ) as charge_category
from cur2_delivery_rows($files);

-- name: units
-- The FOCUS unit of each distinct pricing unit of a CUR 2.0 delivery.
insert into unit_names
with units as (
    select distinct blank(pricing_unit) as provider_unit
    from cur2_delivery_rows($files)
),

final as (
    select
        provider_unit,
        focus_unit(provider_unit) as focus_unit
    from units
    where provider_unit is not null
)

select * from final;

-- name: products
-- What each distinct product of a CUR 2.0 delivery gives (`cur2_products`).
insert into cur2_products by name
with products as (
    select distinct
        product,
        product_sku,
        product_product_name,
        product_region_code,
        product_region,
        product_location,
        product_instance_type,
        product_instance_type_family,
        product_vcpu,
        product_gpu,
        product_memory,
        product_operating_system,
        product_storage_class
    from cur2_delivery_rows($files)
),

typed as (
    select
        *,
        blank(product_sku) as sku_id,
        coalesce(product['product_name'], blank(product_product_name)) as product_name,
        coalesce(blank(product_region_code), blank(product_region)) as region_id,
        coalesce(blank(product_instance_type), product['instance_type']) as instance_type
    from products
),

final as (
    select
        typed.*,
        case
            when typed.region_id is not null
                then coalesce(
                    blank(typed.product_location),
                    blank(typed.product['location']),
                    blank(typed.product_region_code),
                    blank(typed.product_region)
                )
        end as region_name,
        gpu_instance_types.gpus,
        cur2_sku_price_details(
            typed.instance_type,
            coalesce(blank(typed.product_instance_type_family), typed.product['instance_type_family']),
            coalesce(blank(typed.product_vcpu), typed.product['vcpu']),
            coalesce(blank(typed.product_gpu), typed.product['gpu']),
            coalesce(blank(typed.product_memory), typed.product['memory']),
            coalesce(blank(typed.product_operating_system), typed.product['operating_system']),
            coalesce(blank(typed.product_storage_class), typed.product['storage_class'])
        ) as sku_price_details
    from typed
    left join gpu_instance_types on gpu_instance_key(typed.instance_type) = gpu_instance_types.instance_type
)

select * from final;

-- name: insert
-- Inserts a CUR 2.0 delivery's rows, mapped onto FOCUS by `cur2_focus_rows`.
insert into focus_line_items by name
select * from cur2_focus_rows($files, $source_name, $period_label, $execution_id, $source_format, $ingested_at);

-- name: staged
-- The delivery's FOCUS rows written to a Parquet file as the mapping computes them (key-value
-- maps as entry lists), outside the warehouse: the mapping's output to inspect.
copy (
    select * replace (
        map_entries(Tags) as Tags,
        map_entries(x_Credits) as x_Credits,
        map_entries(x_SystemLabels) as x_SystemLabels
    )
    from cur2_focus_rows($files, $source_name, $period_label, $execution_id, $source_format, $ingested_at)
) to $target (format parquet);
