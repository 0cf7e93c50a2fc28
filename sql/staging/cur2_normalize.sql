-- The CUR 2.0 → FOCUS 1.2 mapping, run by DuckDB straight from a delivery's Parquet files (a
-- legacy CUR delivery is first converted to CUR 2.0 columns). Created per connection (temporary):
-- the tables a load fills (`cur2_delivery_files`, `cur2_cost_categories`) belong to one load.

-- Every column the mapping reads, typed, without rows: a delivery is read as this table
-- `union all by name` its files, so a column a file lacks (older exports, schema drift) is NULL
-- instead of an error. A money column united with a file's DOUBLE is DOUBLE (CUR 2.0 writes
-- them so); a legacy delivery's are already DECIMAL(38,10), converted from the text AWS wrote.
create or replace temp table cur2_columns (
    bill_billing_entity varchar,
    bill_billing_period_end_date timestamp,
    bill_billing_period_start_date timestamp,
    bill_invoice_id varchar,
    bill_invoicing_entity varchar,
    bill_payer_account_id varchar,
    bill_payer_account_name varchar,
    line_item_availability_zone varchar,
    line_item_currency_code varchar,
    line_item_line_item_description varchar,
    line_item_line_item_type varchar,
    line_item_net_unblended_cost decimal(38, 10),
    line_item_product_code varchar,
    line_item_resource_id varchar,
    line_item_tax_type varchar,
    line_item_unblended_cost decimal(38, 10),
    line_item_usage_account_id varchar,
    line_item_usage_account_name varchar,
    line_item_usage_amount decimal(38, 10),
    line_item_usage_end_date timestamp,
    line_item_usage_start_date timestamp,
    line_item_usage_type varchar,
    pricing_public_on_demand_cost decimal(38, 10),
    pricing_public_on_demand_rate varchar,
    pricing_rate_id varchar,
    pricing_term varchar,
    pricing_unit varchar,
    product map(varchar, varchar),
    product_instance_type varchar,
    product_product_name varchar,
    product_region varchar,
    product_region_code varchar,
    product_servicecode varchar,
    product_sku varchar,
    reservation_effective_cost decimal(38, 10),
    reservation_net_effective_cost decimal(38, 10),
    reservation_net_unused_amortized_upfront_fee_for_billing_period decimal(38, 10),
    reservation_net_unused_recurring_fee decimal(38, 10),
    reservation_reservation_a_r_n varchar,
    reservation_unused_amortized_upfront_fee_for_billing_period decimal(38, 10),
    reservation_unused_recurring_fee decimal(38, 10),
    resource_tags map(varchar, varchar),
    -- a legacy delivery's tag columns, converted to key/value entries
    resource_tag_entries struct(key varchar, value varchar)[],
    savings_plan_net_savings_plan_effective_cost decimal(38, 10),
    savings_plan_savings_plan_a_r_n varchar,
    savings_plan_savings_plan_effective_cost decimal(38, 10),
    savings_plan_total_commitment_to_date decimal(38, 10),
    savings_plan_used_commitment decimal(38, 10),
    -- a legacy delivery's rows name their original file here
    _source_file varchar
);

-- The delivery's files in delivery order: where the user finds each, and the delivery's row
-- number of its first row (x_LineItemKey numbers rows across the whole delivery).
create or replace temp table cur2_delivery_files (file varchar, location varchar, first_row bigint);

-- The cost category rules as LIKE patterns (NULL: any value), first (lowest rule_order) wins.
create or replace temp table cur2_category_rules (
    rule_order integer,
    provider varchar,
    service varchar,
    service_category varchar,
    detail varchar,
    charge_category varchar,
    cost_category varchar
);

-- x_CostCategory and ServiceCategory of each (service, usage type, charge category) the delivery
-- holds.
create or replace temp table cur2_cost_categories (
    service_key varchar,
    detail varchar,
    charge_category varchar,
    cost_category varchar,
    service_category varchar
);

create or replace temp table cur2_gpu_instance_types (instance_type varchar, gpus integer);

create or replace temp table cur2_service_categories (service_code varchar, service_category varchar);

-- The ServiceCategory of a service missing from cur2_service_categories, by its cost category.
create or replace temp table cur2_cost_category_services (cost_category varchar, service_category varchar);

-- FOCUS nulls are NULL, never blank text; what is kept is trimmed of whitespace (Unicode's, as
-- the polars mappings of the other formats trim).
create or replace temp macro cur2_blank(value) as
    nullif(regexp_replace(cast(value as varchar), '^[\s\x0B\x{85}\p{Z}]+|[\s\x0B\x{85}\p{Z}]+$', '', 'g'), '');

-- A number's text (its shortest form for a DOUBLE) rounded half to even at the 10th decimal, as
-- `money()` rounds the polars-mapped formats; blank text is NULL.
create or replace temp macro cur2_text_money(text) as
    cast(
        round(cast(cur2_blank(text) as decimal(38, 20)), 10)
        - case
            when abs(cast(cur2_blank(text) as decimal(38, 20)) - round(cast(cur2_blank(text) as decimal(38, 20)), 10))
                = 0.00000000005
                -- the 10th decimal is odd (an IN list here would become a join over every row)
                and cast(
                    right(cast(round(cast(cur2_blank(text) as decimal(38, 20)), 10) as varchar), 1) as integer
                ) % 2 = 1
                then sign(cast(cur2_blank(text) as decimal(38, 20))) * 0.0000000001
            else 0
        end
        as decimal(38, 10)
    );

-- A provider number as DECIMAL(38,10), as `cur2_text_money` would round its text. DuckDB's cast
-- (the DOUBLE × 10^10, rounded) is that whenever the number has at most 10 decimals and stays
-- below 10^5 (the cast back gives the same DOUBLE): the common case, ten times faster than text.
create or replace temp macro cur2_money(value) as
    case
        when abs(try_cast(value as double)) < 100000
            and cast(cast(value as decimal(38, 10)) as double) = try_cast(value as double)
            then cast(value as decimal(38, 10))
        else cur2_text_money(cast(value as varchar))
    end;

-- FOCUS ChargeCategory; a refund keeps the category of what it refunds (FOCUS 1.2): tax (the line
-- has a tax type), a commitment purchase (Savings Plan product or a reservation), or usage.
create or replace temp macro cur2_charge_category(line_type, product_code, reservation_arn, tax_type) as
    case
        when line_type = 'Refund' then
            case
                when cur2_blank(tax_type) is not null then 'Tax'
                when coalesce(product_code = 'ComputeSavingsPlans', false) or cur2_blank(reservation_arn) is not null
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
            lambda tag: cur2_blank(tag.value) is not null
        ))
    end;

create or replace temp macro cur2_service_key(product_code, servicecode) as
    coalesce(cur2_blank(product_code), cur2_blank(servicecode));

-- The delivery's rows with every mapped column (missing ones NULL) and their place in it.
create or replace temp macro cur2_delivery_rows(files) as table
    select *
    from cur2_columns
    union all by name
    select *
    from read_parquet(files, filename = true, file_row_number = true, union_by_name = true, hive_partitioning = false);

-- The delivery's rows as `focus_line_items` rows, every column in the table's order.
-- BilledCost = coalesce(net unblended, unblended). EffectiveCost follows the amortization rule of
-- AWS's Cloud Intelligence Dashboards (../shared/BILLING.md): Savings-Plan-covered usage at its SP
-- effective cost, negations and upfront fees 0, RI usage at its reservation effective cost, and
-- RI/SP fees at their unused part. Needs `cur2_delivery_files` and `cur2_cost_categories` filled.
create or replace temp macro cur2_focus_rows(
    files, source_name, period_label, execution_id, source_format, ingested_at
) as table
with delivery as (
    select * from cur2_delivery_rows(files)
),

delivery_files as (
    select * from cur2_delivery_files
),

mapped as (
    select
        delivery.*,
        delivery_files.location,
        delivery_files.first_row,
        cur2_service_key(line_item_product_code, product_servicecode) as service_key,
        cur2_blank(line_item_usage_type) as detail,
        cur2_charge_category(
            line_item_line_item_type, line_item_product_code, reservation_reservation_a_r_n, line_item_tax_type
        ) as charge_category,
        coalesce(cur2_blank(product_instance_type), product['instance_type']) as instance_type,
        cur2_money(line_item_usage_amount) as usage_amount,
        coalesce(cur2_money(line_item_net_unblended_cost), cur2_money(line_item_unblended_cost)) as billed_cost,
        cur2_blank(savings_plan_savings_plan_a_r_n) as savings_plan_arn,
        cur2_blank(reservation_reservation_a_r_n) as reservation_arn,
        line_item_line_item_type in ('Usage', 'DiscountedUsage', 'SavingsPlanCoveredUsage') as is_usage
    from delivery
    left join delivery_files on delivery.filename = delivery_files.file
),

final as (
    select
        cast(bill_payer_account_id as varchar) as BillingAccountId,
        bill_payer_account_name as BillingAccountName,
        line_item_currency_code as BillingCurrency,
        bill_billing_period_start_date as BillingPeriodStart,
        bill_billing_period_end_date as BillingPeriodEnd,
        line_item_usage_start_date as ChargePeriodStart,
        line_item_usage_end_date as ChargePeriodEnd,
        mapped.charge_category as ChargeCategory,
        -- a line for usage before its billing period corrects an already-invoiced period
        case when line_item_usage_start_date < bill_billing_period_start_date then 'Correction' end as ChargeClass,
        cur2_blank(line_item_line_item_description) as ChargeDescription,
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
        cur2_blank(bill_invoicing_entity) as InvoiceIssuerName,
        cur2_blank(bill_invoice_id) as InvoiceId,
        coalesce(product['product_name'], cur2_blank(product_product_name), mapped.service_key) as ServiceName,
        cost_categories.service_category as ServiceCategory,
        cast(line_item_usage_account_id as varchar) as SubAccountId,
        line_item_usage_account_name as SubAccountName,
        coalesce(cur2_blank(product_region_code), cur2_blank(product_region)) as RegionId,
        cur2_blank(line_item_availability_zone) as AvailabilityZone,
        cur2_blank(line_item_resource_id) as ResourceId,
        cast(null as varchar) as ResourceName,
        cast(null as varchar) as ResourceType,
        cur2_blank(product_sku) as SkuId,
        cur2_blank(pricing_rate_id) as SkuPriceId,
        case
            when line_item_line_item_type in ('SavingsPlanCoveredUsage', 'DiscountedUsage') then 'Committed'
            when coalesce(cur2_blank(pricing_term) = 'Spot' or contains(mapped.detail, 'SpotUsage'), false)
                then 'Dynamic'
            else case cur2_blank(pricing_term)
                when 'OnDemand' then 'Standard'
                when 'Reserved' then 'Committed'
                when 'Spot' then 'Dynamic'
            end
        end as PricingCategory,
        usage_amount as PricingQuantity,
        cur2_blank(pricing_unit) as PricingUnit,
        case when is_usage then usage_amount end as ConsumedQuantity,
        case when is_usage then cur2_blank(pricing_unit) end as ConsumedUnit,
        cur2_money(pricing_public_on_demand_rate) as ListUnitPrice,
        -- the condition in parentheses: sqlfluff parses `is distinct from '...'` only so
        case
            when (line_item_line_item_type is distinct from 'SavingsPlanNegation')
                then cur2_money(pricing_public_on_demand_cost)
        end as ListCost,
        cur2_money(line_item_unblended_cost) as ContractedCost,
        case
            when line_item_line_item_type = 'SavingsPlanCoveredUsage'
                then coalesce(
                    cur2_money(savings_plan_net_savings_plan_effective_cost),
                    cur2_money(savings_plan_savings_plan_effective_cost)
                )
            when line_item_line_item_type = 'SavingsPlanRecurringFee'
                then cur2_money(savings_plan_total_commitment_to_date) - cur2_money(savings_plan_used_commitment)
            when line_item_line_item_type in ('SavingsPlanNegation', 'SavingsPlanUpfrontFee')
                then cast(0 as decimal(38, 10))
            when line_item_line_item_type = 'DiscountedUsage'
                then coalesce(cur2_money(reservation_net_effective_cost), cur2_money(reservation_effective_cost))
            when line_item_line_item_type = 'RIFee' then
                coalesce(
                    cur2_money(reservation_net_unused_amortized_upfront_fee_for_billing_period),
                    cur2_money(reservation_unused_amortized_upfront_fee_for_billing_period),
                    0
                )
                + coalesce(
                    cur2_money(reservation_net_unused_recurring_fee), cur2_money(reservation_unused_recurring_fee), 0
                )
            when line_item_line_item_type = 'Fee' and reservation_arn is not null then cast(0 as decimal(38, 10))
            when line_item_line_item_type = 'Refund' and line_item_product_code = 'ComputeSavingsPlans'
                then cast(0 as decimal(38, 10))
            else billed_cost
        end as EffectiveCost,
        billed_cost as BilledCost,
        coalesce(savings_plan_arn, reservation_arn) as CommitmentDiscountId,
        case
            when savings_plan_arn is not null then 'Savings Plan'
            when reservation_arn is not null then 'Reservation'
        end as CommitmentDiscountType,
        case
            when line_item_line_item_type in ('SavingsPlanCoveredUsage', 'DiscountedUsage') then 'Used'
        end as CommitmentDiscountStatus,
        cur2_tags(resource_tags, resource_tag_entries) as Tags,
        concat_ws('|', source_name, period_label, execution_id, first_row + file_row_number) as x_LineItemKey,
        source_name as x_SourceName,
        source_format as x_SourceFormat,
        coalesce(_source_file, location) as x_SourceFile,
        cast(ingested_at as timestamp) as x_IngestedAt,
        cost_categories.cost_category as x_CostCategory,
        mapped.instance_type as x_InstanceType,
        gpu_instance_types.gpus as x_GpuCount,
        case
            when is_usage
                and regexp_matches(coalesce(mapped.detail, ''), '(?i)(BoxUsage|DedicatedUsage|HeavyUsage|SpotUsage)')
                and gpu_instance_types.gpus is not null
                then cast(usage_amount * gpu_instance_types.gpus as decimal(38, 10))
            else cast(0 as decimal(38, 10))
        end as x_GpuHours,
        cast(null as map(varchar, decimal(38, 10))) as x_Credits,
        cast(null as decimal(38, 10)) as x_CurrencyConversionRate,
        cast(null as map(varchar, varchar)) as x_SystemLabels
    from mapped
    left join cur2_cost_categories as cost_categories
        on mapped.service_key is not distinct from cost_categories.service_key
        and mapped.detail is not distinct from cost_categories.detail
        and mapped.charge_category is not distinct from cost_categories.charge_category
    left join cur2_gpu_instance_types as gpu_instance_types
        on lower(mapped.instance_type) = gpu_instance_types.instance_type
)

select * from final;
