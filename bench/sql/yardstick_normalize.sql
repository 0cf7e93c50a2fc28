-- The yardstick: a bare DuckDB pass over a CUR 2.0 delivery, written plainly. It reads the
-- Parquet files, computes about 40 FOCUS 1.2 columns with the amortized EffectiveCost of
-- BILLING.md in DECIMAL(38,10), and writes one table. No checks, no attribution.
create table focus_line_items as
with cur as (
    select * from read_parquet($files, filename = true)
),

final as (
    select
        bill_payer_account_id as BillingAccountId,
        bill_payer_account_name as BillingAccountName,
        line_item_currency_code as BillingCurrency,
        bill_billing_period_start_date as BillingPeriodStart,
        bill_billing_period_end_date as BillingPeriodEnd,
        line_item_usage_start_date as ChargePeriodStart,
        line_item_usage_end_date as ChargePeriodEnd,
        case
            when line_item_line_item_type in (
                'Usage', 'DiscountedUsage', 'SavingsPlanCoveredUsage', 'SavingsPlanNegation'
            ) then 'Usage'
            when line_item_line_item_type in ('SavingsPlanUpfrontFee', 'SavingsPlanRecurringFee', 'RIFee', 'Fee')
                then 'Purchase'
            when line_item_line_item_type = 'Tax' then 'Tax'
            when line_item_line_item_type = 'Credit' then 'Credit'
            else 'Adjustment'
        end as ChargeCategory,
        case when line_item_usage_start_date < bill_billing_period_start_date then 'Correction' end as ChargeClass,
        nullif(trim(line_item_line_item_description), '') as ChargeDescription,
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
        nullif(trim(bill_invoicing_entity), '') as InvoiceIssuerName,
        nullif(trim(bill_invoice_id), '') as InvoiceId,
        coalesce(product['product_name'], line_item_product_code) as ServiceName,
        coalesce(nullif(trim(line_item_usage_account_id), ''), '') as SubAccountId,
        line_item_usage_account_name as SubAccountName,
        nullif(trim(product_region_code), '') as RegionId,
        nullif(trim(line_item_availability_zone), '') as AvailabilityZone,
        nullif(trim(line_item_resource_id), '') as ResourceId,
        nullif(trim(product_sku), '') as SkuId,
        nullif(trim(pricing_rate_id), '') as SkuPriceId,
        case
            when line_item_line_item_type in ('SavingsPlanCoveredUsage', 'DiscountedUsage') then 'Committed'
            when pricing_term = 'Spot' then 'Dynamic'
            when pricing_term = 'OnDemand' then 'Standard'
        end as PricingCategory,
        cast(line_item_usage_amount as decimal(38, 10)) as PricingQuantity,
        nullif(trim(pricing_unit), '') as PricingUnit,
        case when line_item_line_item_type in ('Usage', 'DiscountedUsage', 'SavingsPlanCoveredUsage')
            then cast(line_item_usage_amount as decimal(38, 10)) end as ConsumedQuantity,
        cast(nullif(trim(pricing_public_on_demand_rate), '') as decimal(38, 10)) as ListUnitPrice,
        cast(pricing_public_on_demand_cost as decimal(38, 10)) as ListCost,
        cast(line_item_unblended_cost as decimal(38, 10)) as ContractedCost,
        cast(coalesce(line_item_net_unblended_cost, line_item_unblended_cost) as decimal(38, 10)) as BilledCost,
        case line_item_line_item_type
            when 'SavingsPlanCoveredUsage' then cast(savings_plan_savings_plan_effective_cost as decimal(38, 10))
            when 'SavingsPlanRecurringFee' then cast(savings_plan_total_commitment_to_date as decimal(38, 10))
                - cast(savings_plan_used_commitment as decimal(38, 10))
            when 'SavingsPlanNegation' then cast(0 as decimal(38, 10))
            when 'SavingsPlanUpfrontFee' then cast(0 as decimal(38, 10))
            when 'DiscountedUsage' then cast(reservation_effective_cost as decimal(38, 10))
            when 'RIFee'
                then coalesce(cast(reservation_unused_amortized_upfront_fee_for_billing_period as decimal(38, 10)), 0)
                + coalesce(cast(reservation_unused_recurring_fee as decimal(38, 10)), 0)
            else cast(coalesce(line_item_net_unblended_cost, line_item_unblended_cost) as decimal(38, 10))
        end as EffectiveCost,
        coalesce(nullif(trim(savings_plan_savings_plan_a_r_n), ''), nullif(trim(reservation_reservation_a_r_n), ''))
            as CommitmentDiscountId,
        case
            when nullif(trim(savings_plan_savings_plan_a_r_n), '') is not null then 'Savings Plan'
            when nullif(trim(reservation_reservation_a_r_n), '') is not null then 'Reservation'
        end as CommitmentDiscountType,
        resource_tags as Tags,
        identity_line_item_id || '|' || identity_time_interval as x_LineItemKey,
        filename as x_SourceFile,
        nullif(trim(product_instance_type), '') as x_InstanceType
    from cur
)

select * from final
