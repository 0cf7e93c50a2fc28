-- Step 4 of attribution: which shared-cost rule takes each line no run claimed.

-- name: match
-- Attribution step 4: which lines each shared-cost rule takes (this connection only): among the
-- lines no step claimed (unattributed with no rule), the first rule in configured order whose
-- globs all match the line's FOCUS columns (a NULL column matches no glob; a derived row's are
-- those of the line it was derived from). Globs are DuckDB's GLOB, case-sensitive like the
-- registry's.
create or replace temp table shared_line_rules as
with unclaimed as (
    select line_row
    from allocation_shares
    where allocation_method = 'unattributed' and allocation_rule is null
),

unclaimed_lines as (
    select focus_line_items.rowid as line_row, focus_line_items.*
    from focus_line_items
    semi join unclaimed on focus_line_items.rowid = unclaimed.line_row
    where in_billing_period(focus_line_items.BillingPeriodStart, $billing_period)
),

-- the lines rows were derived from (x_DerivedFrom: a commitment fee of an Unused row)
origins as (
    select *
    from focus_line_items
    where in_billing_period(BillingPeriodStart, $billing_period)
        and x_LineItemKey in (select x_DerivedFrom from unclaimed_lines where x_DerivedFrom is not null)
),

-- a derived row is matched as the line it was derived from: a rule taking a commitment fee
-- (e.g. ChargeCategory Purchase) takes the fee's unused commitment too, as before it had a row
line_items as (
    select * from unclaimed_lines
    where x_DerivedFrom is null
    union all by name
    select derived.line_row, origins.*
    from unclaimed_lines as derived
    inner join origins on derived.x_DerivedFrom = origins.x_LineItemKey
),

rules as (
    select * from shared_rules
),

conditions as (
    select * from shared_rule_conditions
),

condition_matches as (
    select line_items.line_row, conditions.rule_name
    from line_items
    cross join conditions
    where (
        case conditions.column_name
                when 'BillingAccountId' then line_items.BillingAccountId
                when 'BillingAccountName' then line_items.BillingAccountName
                when 'BillingCurrency' then line_items.BillingCurrency
                when 'ChargeCategory' then line_items.ChargeCategory
                when 'ChargeClass' then line_items.ChargeClass
                when 'ChargeDescription' then line_items.ChargeDescription
                when 'ChargeFrequency' then line_items.ChargeFrequency
                when 'ProviderName' then line_items.ProviderName
                when 'PublisherName' then line_items.PublisherName
                when 'InvoiceIssuerName' then line_items.InvoiceIssuerName
                when 'InvoiceId' then line_items.InvoiceId
                when 'ServiceName' then line_items.ServiceName
                when 'ServiceCategory' then line_items.ServiceCategory
                when 'SubAccountId' then line_items.SubAccountId
                when 'SubAccountName' then line_items.SubAccountName
                when 'RegionId' then line_items.RegionId
                when 'AvailabilityZone' then line_items.AvailabilityZone
                when 'ResourceId' then line_items.ResourceId
                when 'ResourceName' then line_items.ResourceName
                when 'ResourceType' then line_items.ResourceType
                when 'SkuId' then line_items.SkuId
                when 'SkuPriceId' then line_items.SkuPriceId
                when 'PricingCategory' then line_items.PricingCategory
                when 'PricingUnit' then line_items.PricingUnit
                when 'ConsumedUnit' then line_items.ConsumedUnit
                when 'CommitmentDiscountId' then line_items.CommitmentDiscountId
                when 'CommitmentDiscountType' then line_items.CommitmentDiscountType
                when 'CommitmentDiscountStatus' then line_items.CommitmentDiscountStatus
                when 'BillingAccountType' then line_items.BillingAccountType
                when 'SubAccountType' then line_items.SubAccountType
                when 'RegionName' then line_items.RegionName
                when 'ServiceSubcategory' then line_items.ServiceSubcategory
                when 'SkuMeter' then line_items.SkuMeter
                when 'SkuPriceDetails' then line_items.SkuPriceDetails
                when 'PricingCurrency' then line_items.PricingCurrency
                when 'CommitmentDiscountCategory' then line_items.CommitmentDiscountCategory
                when 'CommitmentDiscountName' then line_items.CommitmentDiscountName
                when 'CommitmentDiscountUnit' then line_items.CommitmentDiscountUnit
                when 'CapacityReservationId' then line_items.CapacityReservationId
                when 'CapacityReservationStatus' then line_items.CapacityReservationStatus
                when 'x_SourceName' then line_items.x_SourceName
                when 'x_SourceFormat' then line_items.x_SourceFormat
                when 'x_CostCategory' then line_items.x_CostCategory
                when 'x_InstanceType' then line_items.x_InstanceType
                when 'x_ProviderPricingUnit' then line_items.x_ProviderPricingUnit
                when 'x_ProviderConsumedUnit' then line_items.x_ProviderConsumedUnit
                when 'x_SplitParentResourceId' then line_items.x_SplitParentResourceId
        end
    ) glob conditions.pattern
),

rule_matches as (
    select condition_matches.line_row, rules.rule_name, rules.priority
    from condition_matches
    inner join rules on condition_matches.rule_name = rules.rule_name
    group by condition_matches.line_row, rules.rule_name, rules.priority, rules.condition_count
    having count(*) = rules.condition_count
),

final as (
    select line_row, arg_min(rule_name, priority) as rule_name
    from rule_matches
    group by line_row
)

select * from final;

-- name: drop_from_shares
-- Lines a shared-cost rule takes leave the step 1-3 shares; step 4 splits them afterwards.
delete from allocation_shares
where line_row in (select line_row from shared_line_rules);
