-- The GCP Cloud Billing export (BigQuery schema) → FOCUS 1.2 mapping, run by DuckDB on the export's
-- Parquet: files of the export, NDJSON files typed by polars (export_rows.py
-- beside this file) or a BigQuery snapshot. Created per connection (temporary), after
-- sql/staging/macros.sql, whose tables a load fills.
--
-- Net cost = cost + Σ credits.amount is BilledCost, and EffectiveCost but on commitment fees; the
-- credits are also kept per credit type in x_Credits. Committed use discounts (docs/semantics.md):
-- a row with COMMITTED_USAGE_DISCOUNT(_DOLLAR_BASE) credits is covered usage (CommitmentDiscountId
-- the credit's id, Status Used); a commitment fee row (SKU "Commitment …") is a recurring Purchase
-- with EffectiveCost 0, its net cost carried by two derived rows (key + `|used` / `|unused`,
-- BilledCost 0): the part the covered usage of its charge period used and the rest, Unused. The
-- billing period is `invoice.month`, a Pacific-time month:
-- BillingPeriodStart is its first midnight in America/Los_Angeles, stored in UTC. Tags are
-- `labels`, then `project.labels` for keys the resource does not set; `system_labels` stay out of
-- Tags, in x_SystemLabels. Amounts stay in the row's currency (`currency_conversion_rate` is kept
-- in x_CurrencyConversionRate, never applied).

-- name: create
-- The mapping's temporary tables and macros.
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
    -- the detailed export's price of the row's pricing tier
    price struct(
        effective_price decimal(38, 10), tier_start_amount decimal(38, 10), unit varchar,
        pricing_unit_quantity decimal(38, 10)
    ),
    subscription struct(instance_id varchar),
    -- a BigQuery snapshot's rows carry their key here (snapshot_keys.sql beside this file)
    _line_key varchar,
    -- typed NDJSON rows name their file and their place in it here
    _source_file varchar,
    _row bigint
);

-- FOCUS ChargeCategory of a cost_type and SKU: a commitment's fee ("Commitment v1: …") is a Purchase.
create or replace temp macro gcp_charge_category(cost_type, sku_description) as
    case coalesce(cost_type, 'regular')
        when 'regular' then
            case when regexp_matches(coalesce(sku_description, ''), '(?i)^commitment') then 'Purchase' else 'Usage' end
        when 'tax' then 'Tax'
        else 'Adjustment'
    end;

-- A number as short text: its money value without trailing zeros (0, 1.5, 1000000).
create or replace temp macro gcp_number_text(value) as
    regexp_replace(regexp_replace(cast(money(value) as varchar), '(\.\d*?)0+$', '\1'), '\.$', '');

-- The committed use discount credits of a row.
create or replace temp macro gcp_cud_credits(credits) as
    list_filter(
        coalesce(credits, []),
        credit -> credit.type in ('COMMITTED_USAGE_DISCOUNT', 'COMMITTED_USAGE_DISCOUNT_DOLLAR_BASE')
    );

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

-- The delivery's rows as `focus_line_items` rows, and the derived rows of its commitment fees. A
-- row's key is `source|file|row` (its place in the file, so new files leave it as it is), or the
-- key its snapshot gives it. Needs `delivery_files`, `region_names` and `gcp_skus` filled
-- (sql/staging/lookups.sql, `skus`).
create or replace temp macro gcp_focus_rows(files, invoice_month, source_name, ingested_at) as table
with delivery as (
    select * from gcp_delivery_rows(files, invoice_month)
),

file_locations as (
    select * from delivery_files
),

regions as (
    select * from region_names
    where provider = 'Google Cloud'
),

skus as (
    select * from gcp_skus
),

mapped as (
    select
        delivery.*,
        coalesce(delivery._source_file, file_locations.location, delivery.filename) as source_file,
        coalesce(delivery._row, delivery.file_row_number) as source_row,
        skus.charge_category,
        skus.cost_category,
        skus.default_service_category,
        skus.service_subcategory,
        skus.focus_pricing_unit,
        skus.focus_usage_unit,
        skus.purchase_commitment_category,
        skus.sku_price_id,
        skus.sku_price_details,
        skus.contracted_unit_price,
        skus.is_gpu_usage,
        money(delivery.cost) + coalesce(list_sum(list_transform(delivery.credits, credit -> money(credit.amount))), 0)
            as net_cost,
        gcp_cud_credits(delivery.credits) as cud_credits,
        -- the usage the committed use discount credits paid for, at the row's price (positive)
        -coalesce(list_sum(list_transform(gcp_cud_credits(delivery.credits), credit -> money(credit.amount))), 0)
            as cud_amount,
        list_filter(delivery.system_labels, label -> label.key = 'compute.googleapis.com/machine_spec')[1].value
            as instance_type
    from delivery
    left join file_locations on delivery.filename = file_locations.file
    left join skus
        on delivery.service.description is not distinct from skus.service_description
        and delivery.sku.id is not distinct from skus.sku_id
        and delivery.sku.description is not distinct from skus.sku_description
        and delivery.cost_type is not distinct from skus.cost_type
        and delivery.usage.unit is not distinct from skus.usage_unit
        and delivery.usage.pricing_unit is not distinct from skus.usage_pricing_unit
        and delivery.price.tier_start_amount is not distinct from skus.price_tier_start_amount
        and delivery.price.effective_price is not distinct from skus.price_effective_price
        and delivery.price.pricing_unit_quantity is not distinct from skus.price_pricing_unit_quantity
),

priced as (
    select
        mapped.*,
        case
            when mapped.charge_category <> 'Tax' and blank(mapped.usage.pricing_unit) is not null
                then money(mapped.usage.amount_in_pricing_units)
        end as pricing_quantity,
        case
            when mapped.charge_category = 'Usage' and blank(mapped.usage.unit) is not null
                then money(mapped.usage.amount)
        end as consumed_quantity,
        case
            when mapped.charge_category = 'Purchase'
                then coalesce(
                    blank(mapped.subscription.instance_id),
                    blank(mapped.resource.global_name),
                    blank(mapped.resource.name)
                )
            when mapped.charge_category = 'Usage'
                then coalesce(
                    blank(mapped.cud_credits[1].id),
                    blank(mapped.cud_credits[1].full_name),
                    blank(mapped.cud_credits[1].name)
                )
        end as commitment_id,
        case
            when mapped.charge_category = 'Purchase' then mapped.purchase_commitment_category
            when mapped.cud_credits[1].type = 'COMMITTED_USAGE_DISCOUNT_DOLLAR_BASE' then 'Spend'
            else 'Usage'
        end as commitment_category
    from mapped
),

lines as (
    select
        priced.billing_account_id as BillingAccountId,
        cast(null as varchar) as BillingAccountName,
        priced.currency as BillingCurrency,
        -- every row's invoice.month is the delivery's
        gcp_month_start(invoice_month, 0) as BillingPeriodStart,
        gcp_month_start(invoice_month, 1) as BillingPeriodEnd,
        utc_timestamp(priced.usage_start_time) as ChargePeriodStart,
        utc_timestamp(priced.usage_end_time) as ChargePeriodEnd,
        priced.charge_category as ChargeCategory,
        -- adjustments that restate usage already billed; goodwill, SLA and other general
        -- adjustments are new charges, not corrections
        case
            when coalesce(
                priced.adjustment_info.type in ('USAGE_CORRECTION', 'PRICE_CORRECTION', 'METADATA_CORRECTION')
                or priced.adjustment_info.mode in (
                    'PARTIAL_CORRECTION', 'COMPLETE_NEGATION', 'COMPLETE_NEGATION_WITH_REMONETIZATION'
                ),
                false
            ) then 'Correction'
        end as ChargeClass,
        priced.sku.description as ChargeDescription,
        case priced.charge_category
            when 'Tax' then 'One-Time'
            when 'Purchase' then 'Recurring'
            else 'Usage-Based'
        end as ChargeFrequency,
        'Google Cloud' as ProviderName,
        coalesce(blank(priced.seller_name), 'Google') as PublisherName,
        'Google' as InvoiceIssuerName,
        cast(null as varchar) as InvoiceId,
        priced.service.description as ServiceName,
        priced.default_service_category as ServiceCategory,
        priced.project.id as SubAccountId,
        priced.project.name as SubAccountName,
        blank(priced.location.region) as RegionId,
        blank(priced.location.zone) as AvailabilityZone,
        coalesce(blank(priced.resource.global_name), blank(priced.resource.name)) as ResourceId,
        blank(priced.resource.name) as ResourceName,
        cast(null as varchar) as ResourceType,
        -- Tax rows have no SKU in FOCUS (the export gives its tax SKU in ChargeDescription)
        case when priced.charge_category <> 'Tax' then priced.sku.id end as SkuId,
        priced.sku_price_id as SkuPriceId,
        case
            when priced.charge_category = 'Usage' and priced.commitment_id is not null then 'Committed'
            when priced.charge_category in ('Usage', 'Purchase') then 'Standard'
        end as PricingCategory,
        priced.pricing_quantity as PricingQuantity,
        case when priced.pricing_quantity is not null then priced.focus_pricing_unit end as PricingUnit,
        priced.consumed_quantity as ConsumedQuantity,
        case when priced.consumed_quantity is not null then priced.focus_usage_unit end as ConsumedUnit,
        cast(null as decimal(38, 10)) as ListUnitPrice,
        money(priced.cost_at_list) as ListCost,
        money(priced.cost) as ContractedCost,
        -- a commitment fee's net cost moves to its derived rows (below)
        case
            when priced.charge_category = 'Purchase' and priced.commitment_id is not null
                and priced.pricing_quantity > 0 then cast(0 as decimal(38, 10))
            else priced.net_cost
        end as EffectiveCost,
        priced.net_cost as BilledCost,
        priced.commitment_id as CommitmentDiscountId,
        case when priced.commitment_id is not null then 'Committed Use Discount' end as CommitmentDiscountType,
        case when priced.commitment_id is not null and priced.charge_category = 'Usage' then 'Used' end
            as CommitmentDiscountStatus,
        map_from_entries(
            gcp_first_per_key(list_concat(coalesce(priced.labels, []), coalesce(priced.project.labels, [])))
        ) as Tags,
        'Billing Account' as BillingAccountType,
        case when priced.project.id is not null then 'Project' end as SubAccountType,
        case
            when blank(priced.location.region) is not null
                then coalesce(regions.region_name, priced.location.region)
        end
            as RegionName,
        priced.service_subcategory as ServiceSubcategory,
        case when priced.charge_category <> 'Tax' and priced.sku.id is not null then priced.sku.description end
            as SkuMeter,
        priced.sku_price_details as SkuPriceDetails,
        priced.contracted_unit_price as ContractedUnitPrice,
        case when priced.commitment_id is not null then priced.commitment_category end as CommitmentDiscountCategory,
        case
            when priced.commitment_id is not null and priced.charge_category = 'Usage'
                then coalesce(blank(priced.cud_credits[1].full_name), blank(priced.cud_credits[1].name))
            when priced.commitment_id is not null then blank(priced.resource.name)
        end as CommitmentDiscountName,
        -- what the row used of the commitment (covered usage: its quantity times the share of its
        -- cost the credits paid) or bought (a fee: its quantity); Spend commitments count money
        case
            when priced.commitment_id is null then null
            when priced.commitment_category = 'Spend' and priced.charge_category = 'Purchase' then money(priced.cost)
            when priced.commitment_category = 'Spend' then priced.cud_amount
            when priced.charge_category = 'Purchase' then priced.pricing_quantity
            when money(priced.cost) > 0
                then money_scaled(priced.pricing_quantity, least(priced.cud_amount, money(priced.cost)), priced.cost)
        end as CommitmentDiscountQuantity,
        case
            when priced.commitment_id is null then null
            when priced.commitment_category = 'Spend' then priced.currency
            else priced.focus_pricing_unit
        end as CommitmentDiscountUnit,
        concat_ws('|', source_name, coalesce(priced._line_key, concat_ws('|', priced.source_file, priced.source_row)))
            as x_LineItemKey,
        source_name as x_SourceName,
        'gcp_billing' as x_SourceFormat,
        priced.source_file as x_SourceFile,
        cast(ingested_at as timestamp) as x_IngestedAt,
        priced.cost_category as x_CostCategory,
        priced.instance_type as x_InstanceType,
        gpu_instance_types.gpus as x_GpuCount,
        case
            when priced.is_gpu_usage then coalesce(money_quotient(money(priced.usage.amount), 3600), 0)
            else cast(0 as decimal(38, 10))
        end as x_GpuHours,
        -- Σ credit amounts per credit type, the types in order
        map_from_entries(list_transform(
            list_sort(list_distinct(list_transform(coalesce(priced.credits, []), credit -> gcp_credit_key(credit)))),
            credit_type -> {
                'key': credit_type,
                'value': coalesce(
                    list_sum(list_transform(
                        list_filter(priced.credits, credit -> gcp_credit_key(credit) = credit_type),
                        credit -> money(credit.amount)
                    )),
                    0
                )
            }
        )) as x_Credits,
        money(priced.currency_conversion_rate) as x_CurrencyConversionRate,
        map_from_entries(gcp_first_per_key(coalesce(priced.system_labels, []))) as x_SystemLabels,
        blank(priced.usage.pricing_unit) as x_ProviderPricingUnit,
        blank(priced.usage.unit) as x_ProviderConsumedUnit,
        -- a fee's net cost, which its derived rows carry
        priced.net_cost as fee_net_cost
    from priced
    left join gpu_instance_types on gpu_instance_key(priced.instance_type) = gpu_instance_types.instance_type
    left join regions on priced.location.region = regions.region_id
),

-- each amortized commitment fee (a fee with a commitment and a quantity)
fees as (
    select * from lines
    where ChargeCategory = 'Purchase' and CommitmentDiscountId is not null and PricingQuantity > 0
),

-- what the covered usage of each fee's charge period used of its commitment
fee_coverage as (
    select
        fees.x_LineItemKey,
        coalesce(sum(covered.CommitmentDiscountQuantity), 0) as covered_quantity
    from fees
    left join lines as covered
        on covered.CommitmentDiscountStatus = 'Used'
        and covered.CommitmentDiscountId = fees.CommitmentDiscountId
        and covered.CommitmentDiscountCategory = fees.CommitmentDiscountCategory
        and covered.ChargePeriodStart >= fees.ChargePeriodStart
        and covered.ChargePeriodEnd <= fees.ChargePeriodEnd
    group by fees.x_LineItemKey
),

fee_uses as (
    select
        fees.*,
        least(fees.CommitmentDiscountQuantity, fee_coverage.covered_quantity) as used_quantity
    from fees
    inner join fee_coverage on fees.x_LineItemKey = fee_coverage.x_LineItemKey
),

fee_shares as (
    select
        fee_uses.*,
        money_scaled(fee_uses.fee_net_cost, fee_uses.used_quantity, fee_uses.CommitmentDiscountQuantity) as used_cost
    from fee_uses
),

-- the amortized fee as usage of the commitment: the part used, then the rest, unused
derived as (
    select * replace (
        'Usage' as ChargeCategory,
        'Usage-Based' as ChargeFrequency,
        'Committed' as PricingCategory,
        used_quantity as PricingQuantity,
        used_quantity as ConsumedQuantity,
        CommitmentDiscountUnit as ConsumedUnit,
        cast(0 as decimal(38, 10)) as ListCost,
        cast(0 as decimal(38, 10)) as ContractedCost,
        cast(0 as decimal(38, 10)) as ContractedUnitPrice,
        used_cost as EffectiveCost,
        cast(0 as decimal(38, 10)) as BilledCost,
        'Used' as CommitmentDiscountStatus,
        used_quantity as CommitmentDiscountQuantity,
        x_LineItemKey || '|used' as x_LineItemKey
    ),
    x_LineItemKey as x_DerivedFrom
    from fee_shares
    where used_quantity > 0
    union all
    select * replace (
        'Usage' as ChargeCategory,
        'Usage-Based' as ChargeFrequency,
        'Committed' as PricingCategory,
        CommitmentDiscountQuantity - used_quantity as PricingQuantity,
        cast(null as decimal(38, 10)) as ConsumedQuantity,
        cast(null as varchar) as ConsumedUnit,
        cast(0 as decimal(38, 10)) as ListCost,
        cast(0 as decimal(38, 10)) as ContractedCost,
        cast(0 as decimal(38, 10)) as ContractedUnitPrice,
        fee_net_cost - used_cost as EffectiveCost,
        cast(0 as decimal(38, 10)) as BilledCost,
        'Unused' as CommitmentDiscountStatus,
        CommitmentDiscountQuantity - used_quantity as CommitmentDiscountQuantity,
        x_LineItemKey || '|unused' as x_LineItemKey
    ),
    x_LineItemKey as x_DerivedFrom
    from fee_shares
    where used_quantity < CommitmentDiscountQuantity
),

final as (
    select * exclude (fee_net_cost) from lines
    union all by name
    select * exclude (fee_net_cost, used_quantity, used_cost) from derived
)

select * from final;

-- name: inputs
-- A GCP delivery's (service, SKU, charge category); the export carries no service category.
insert into category_inputs
select distinct
    'Google Cloud' as provider,
    service.description as service,
    cast(null as varchar) as service_category,
    sku.description as detail,
    gcp_charge_category(cost_type, sku.description) as charge_category
from gcp_delivery_rows($files, $invoice_month);

-- name: skus
-- What each distinct SKU of a GCP delivery gives, with the service, cost type, units and price that
-- go with it (the key, NULL matching NULL): its ChargeCategory, cost category (`line_categories`
-- filled), FOCUS units, the commitment category of a fee, SkuPriceId, SkuPriceDetails,
-- ContractedUnitPrice and whether its usage is GPU hours. Computed once per SKU, not per row.
create or replace temp table gcp_skus as
with skus as (
    select distinct
        service.description as service_description,
        sku.id as sku_id,
        sku.description as sku_description,
        cost_type,
        usage.unit as usage_unit,
        usage.pricing_unit as usage_pricing_unit,
        price.tier_start_amount as price_tier_start_amount,
        price.effective_price as price_effective_price,
        price.pricing_unit_quantity as price_pricing_unit_quantity
    from gcp_delivery_rows($files, $invoice_month)
),

charged as (
    select
        *,
        gcp_charge_category(cost_type, sku_description) as charge_category
    from skus
),

final as (
    select
        charged.*,
        categories.cost_category,
        categories.default_service_category,
        categories.service_subcategory,
        focus_unit(charged.usage_pricing_unit) as focus_pricing_unit,
        focus_unit(charged.usage_unit) as focus_usage_unit,
        case
            when regexp_matches(coalesce(charged.sku_description, ''), '(?i)dollar|spend') then 'Spend'
            else 'Usage'
        end as purchase_commitment_category,
        -- the SKU's price (its tier, where the detailed export names one); Tax rows have none
        case
            when charged.charge_category <> 'Tax'
                then charged.sku_id || coalesce('/tier/' || gcp_number_text(charged.price_tier_start_amount), '')
        end as sku_price_id,
        case
            when charged.charge_category <> 'Tax' and charged.price_tier_start_amount is not null
                then '{"x_TierStartAmount": ' || gcp_number_text(charged.price_tier_start_amount) || '}'
        end as sku_price_details,
        -- the tier's price per pricing unit (price.effective_price is per pricing_unit_quantity units)
        case
            when charged.charge_category <> 'Tax' and money(charged.price_pricing_unit_quantity) > 0
                then money_scaled(charged.price_effective_price, 1, charged.price_pricing_unit_quantity)
        end as contracted_unit_price,
        -- hours of GPU SKUs' usage (billed in seconds); the VM's core and memory SKUs carry none
        regexp_matches(coalesce(charged.sku_description, ''), '(?i)\bGPU\b')
        and not regexp_matches(coalesce(charged.sku_description, ''), '(?i)^commitment')
        and lower(coalesce(charged.usage_unit, '')) = 'seconds'
        and coalesce(charged.cost_type, 'regular') = 'regular' as is_gpu_usage
    from charged
    left join line_categories as categories
        on categories.provider = 'Google Cloud'
        and charged.service_description is not distinct from categories.service
        and categories.service_category is null
        and charged.sku_description is not distinct from categories.detail
        and charged.charge_category is not distinct from categories.charge_category
)

select * from final;

-- name: insert
-- Inserts a GCP billing export delivery's rows, mapped onto FOCUS by `gcp_focus_rows`.
insert into focus_line_items by name
select * from gcp_focus_rows($files, $invoice_month, $source_name, $ingested_at);

-- name: staged
-- The delivery's FOCUS rows written to a Parquet file as the mapping computes them (key-value
-- maps as entry lists), outside the warehouse: the mapping's output to inspect.
copy (
    select * replace (
        map_entries(Tags) as Tags,
        map_entries(x_Credits) as x_Credits,
        map_entries(x_SystemLabels) as x_SystemLabels
    )
    from gcp_focus_rows($files, $invoice_month, $source_name, $ingested_at)
) to $target (format parquet);
