-- A FOCUS delivery read before any load: the first value that stops the load, and its raw control
-- totals.

-- name: first_bad_value
-- The first row (in file and row order) of any billing period with a money value that is not a
-- finite number, a timestamp polars could not read (`_unparsed_timestamp`), Tags or
-- SkuPriceDetails that are not a JSON object of key-value pairs (`_unparsed_key_value`) or a
-- ChargePeriodEnd before its ChargePeriodStart: where it is, the column and the value (a row's
-- money first, then its timestamps, then its Tags, then its charge period, with period_start).
with delivery as (
    select * from focus_delivery_rows($files, null, false)
),

file_locations as (
    select * from delivery_files
),

checked as (
    select
        coalesce(file_locations.location, delivery.filename) as location,
        list_position($files, delivery.filename) as file_position,
        delivery.file_row_number,
        first_bad_money([
            {'column_name': 'PricingQuantity', 'value': cast(delivery.PricingQuantity as varchar)},
            {'column_name': 'ConsumedQuantity', 'value': cast(delivery.ConsumedQuantity as varchar)},
            {'column_name': 'ListUnitPrice', 'value': cast(delivery.ListUnitPrice as varchar)},
            {'column_name': 'ListCost', 'value': cast(delivery.ListCost as varchar)},
            {'column_name': 'ContractedCost', 'value': cast(delivery.ContractedCost as varchar)},
            {'column_name': 'EffectiveCost', 'value': cast(delivery.EffectiveCost as varchar)},
            {'column_name': 'BilledCost', 'value': cast(delivery.BilledCost as varchar)},
            {'column_name': 'ContractedUnitPrice', 'value': cast(delivery.ContractedUnitPrice as varchar)},
            {
                'column_name': 'CommitmentDiscountQuantity',
                'value': cast(delivery.CommitmentDiscountQuantity as varchar)
            },
            {
                'column_name': 'PricingCurrencyContractedUnitPrice',
                'value': cast(delivery.PricingCurrencyContractedUnitPrice as varchar)
            },
            {
                'column_name': 'PricingCurrencyEffectiveCost',
                'value': cast(delivery.PricingCurrencyEffectiveCost as varchar)
            },
            {
                'column_name': 'PricingCurrencyListUnitPrice',
                'value': cast(delivery.PricingCurrencyListUnitPrice as varchar)
            }
        ]) as bad_money,
        coalesce(delivery._unparsed_timestamp, delivery._unparsed_key_value) as bad_text,
        case
            when delivery.ChargePeriodEnd < delivery.ChargePeriodStart
                then {
                    'column_name': 'ChargePeriodEnd',
                    'value': strftime(delivery.ChargePeriodEnd, '%Y-%m-%d %H:%M:%S'),
                    'start': strftime(delivery.ChargePeriodStart, '%Y-%m-%d %H:%M:%S')
                }
        end as bad_period
    from delivery
    left join file_locations on delivery.filename = file_locations.file
),

final as (
    select
        location,
        file_row_number,
        coalesce(bad_money.column_name, bad_text.column_name, bad_period.column_name) as column_name,
        coalesce(bad_money.value, bad_text.value, bad_period.value) as value,
        bad_money is null and bad_text is not null as is_timestamp,
        case when bad_money is null and bad_text is null then bad_period.start end as period_start
    from checked
    where bad_money is not null or bad_text is not null or bad_period is not null
    order by file_position, file_row_number
    limit 1
)

select * from final;

-- name: totals
-- The period's rows and Σ BilledCost, the delivery's currencies, and its rows of another period.
with delivery as (
    select * from focus_delivery_rows($files, $billing_period, $select_period)
),

file_locations as (
    select * from delivery_files
),

located as (
    select
        delivery.BillingPeriodStart,
        delivery.BilledCost,
        delivery.BillingCurrency,
        coalesce(file_locations.location, delivery.filename) as location
    from delivery
    left join file_locations on delivery.filename = file_locations.file
),

final as (
    select
        count(*) filter (where date_trunc('month', BillingPeriodStart) = $billing_period) as rows,
        coalesce(sum(money(BilledCost)) filter (where date_trunc('month', BillingPeriodStart) = $billing_period), 0)
            as billed_cost,
        count(*) filter (where date_trunc('month', BillingPeriodStart) <> $billing_period) as rows_outside_period,
        any_value(location) filter (where date_trunc('month', BillingPeriodStart) <> $billing_period)
            as file_outside_period,
        list(distinct blank(BillingCurrency)) filter (where blank(BillingCurrency) is not null) as currencies
    from located
)

select * from final;
