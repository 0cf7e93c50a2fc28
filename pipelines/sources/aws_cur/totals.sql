-- A CUR 2.0 delivery read before any load: its raw control totals, and the first amount that
-- stops the load.

-- name: totals
-- Per file of the delivery: its rows, the raw control total Σ coalesce(net unblended,
-- unblended), its currencies, and its rows of another billing period. Reading the costs and the
-- billing period fails here on a value that is not a number or a timestamp, before any load.
with delivery as (
    select * from cur2_delivery_rows($files)
),

final as (
    select
        filename as file,
        count(*) as rows,
        coalesce(sum(coalesce(money(line_item_net_unblended_cost), money(line_item_unblended_cost))), 0)
            as billed_cost,
        count(*) filter (where date_trunc('month', bill_billing_period_start_date) <> $billing_period)
            as rows_outside_period,
        any_value(coalesce(_source_file, filename))
            filter (where date_trunc('month', bill_billing_period_start_date) <> $billing_period)
            as file_outside_period,
        list(distinct line_item_currency_code) filter (where line_item_currency_code is not null) as currencies,
        max(line_item_usage_start_date) as last_charge_start,
        max(line_item_usage_end_date) as last_charge_end
    from delivery
    group by filename
)

select * from final;

-- name: first_bad_money
-- The first row (in delivery order) with an amount the mapping converts that is not a finite
-- number below 10^15 (`first_bad_money`): its file, its row in the file (0-based), the column and
-- the value.
with delivery as (
    select * from cur2_delivery_rows($files)
),

file_locations as (
    select * from delivery_files
),

checked as (
    select
        coalesce(delivery._source_file, file_locations.location, delivery.filename) as location,
        list_position($files, delivery.filename) as file_position,
        delivery.file_row_number,
        coalesce(delivery._row, delivery.file_row_number) as source_row,
        coalesce(first_bad_money([
            {'column_name': 'line_item_net_unblended_cost', 'value': cast(line_item_net_unblended_cost as varchar)},
            {'column_name': 'line_item_unblended_cost', 'value': cast(line_item_unblended_cost as varchar)},
            {'column_name': 'line_item_usage_amount', 'value': cast(line_item_usage_amount as varchar)},
            {'column_name': 'pricing_public_on_demand_cost', 'value': cast(pricing_public_on_demand_cost as varchar)},
            {'column_name': 'pricing_public_on_demand_rate', 'value': cast(pricing_public_on_demand_rate as varchar)},
            {'column_name': 'reservation_effective_cost', 'value': cast(reservation_effective_cost as varchar)},
            {'column_name': 'reservation_net_effective_cost', 'value': cast(reservation_net_effective_cost as varchar)},
            {
                'column_name': 'reservation_net_unused_amortized_upfront_fee_for_billing_period',
                'value': cast(reservation_net_unused_amortized_upfront_fee_for_billing_period as varchar)
            },
            {
                'column_name': 'reservation_net_unused_recurring_fee',
                'value': cast(reservation_net_unused_recurring_fee as varchar)
            },
            {
                'column_name': 'reservation_unused_amortized_upfront_fee_for_billing_period',
                'value': cast(reservation_unused_amortized_upfront_fee_for_billing_period as varchar)
            },
            {
                'column_name': 'reservation_unused_recurring_fee',
                'value': cast(reservation_unused_recurring_fee as varchar)
            },
            {
                'column_name': 'savings_plan_net_savings_plan_effective_cost',
                'value': cast(savings_plan_net_savings_plan_effective_cost as varchar)
            },
            {
                'column_name': 'savings_plan_savings_plan_effective_cost',
                'value': cast(savings_plan_savings_plan_effective_cost as varchar)
            },
            {
                'column_name': 'savings_plan_total_commitment_to_date',
                'value': cast(savings_plan_total_commitment_to_date as varchar)
            },
            {'column_name': 'savings_plan_used_commitment', 'value': cast(savings_plan_used_commitment as varchar)}
        ]),
        -- the split amounts only on the pod rows that carry them: a list for every row costs seconds a 5M month
        case when split_line_item_parent_resource_id is not null then first_bad_money([
            {'column_name': 'split_line_item_split_cost', 'value': cast(split_line_item_split_cost as varchar)},
            {'column_name': 'split_line_item_unused_cost', 'value': cast(split_line_item_unused_cost as varchar)}
        ]) end) as bad
    from delivery
    left join file_locations on delivery.filename = file_locations.file
),

final as (
    select
        location,
        source_row,
        bad.column_name,
        bad.value
    from checked
    where bad is not null
    order by file_position, file_row_number
    limit 1
)

select * from final;
