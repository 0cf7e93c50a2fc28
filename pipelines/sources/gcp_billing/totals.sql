-- One invoice month of a GCP billing export delivery, read before any load: its raw control
-- totals, and the first value that stops the load.

-- name: totals
-- Rows, Σ cost + Σ credits.amount (each summed from the raw rows), the rows without a cost, the
-- currencies and the newest export_time.
with period_rows as (
    select * from gcp_delivery_rows($files, $invoice_month)
),

credits as (
    select unnest(credits) as credit from period_rows
),

row_totals as (
    select
        count(*) as rows,
        coalesce(sum(money(cost)), 0) as cost,
        count(*) filter (where money(cost) is null) as rows_without_cost,
        list(distinct currency) filter (where currency is not null) as currencies,
        max(utc_timestamp(export_time)) as newest_export_time
    from period_rows
),

credit_totals as (
    select coalesce(sum(money(credit.amount)), 0) as credits from credits
),

final as (
    select
        row_totals.rows,
        row_totals.cost + credit_totals.credits as billed_cost,
        row_totals.rows_without_cost,
        row_totals.currencies,
        row_totals.newest_export_time
    from row_totals
    cross join credit_totals
)

select * from final;

-- name: first_bad_amount
-- The first row (in file and row order) whose cost is empty or one of whose amounts is not a
-- finite number below 10^15 (`first_bad_money`), where it is and what is wrong.
with period_rows as (
    select * from gcp_delivery_rows($files, $invoice_month)
),

file_locations as (
    select * from delivery_files
),

checked as (
    select
        coalesce(period_rows._source_file, file_locations.location, period_rows.filename) as location,
        list_position($files, period_rows.filename) as file_position,
        period_rows.file_row_number,
        coalesce(period_rows._row, period_rows.file_row_number) as source_row,
        period_rows._line_key,
        blank(period_rows.cost) is null as cost_is_empty,
        first_bad_money([
            {'column_name': 'cost', 'value': cast(period_rows.cost as varchar)},
            {
                'column_name': 'credit amount',
                'value': first_bad_money(list_transform(
                    period_rows.credits, credit -> {'column_name': 'amount', 'value': cast(credit.amount as varchar)}
                )).value
            },
            {'column_name': 'usage.amount', 'value': cast(period_rows.usage.amount as varchar)},
            {
                'column_name': 'usage.amount_in_pricing_units',
                'value': cast(period_rows.usage.amount_in_pricing_units as varchar)
            },
            {'column_name': 'cost_at_list', 'value': cast(period_rows.cost_at_list as varchar)},
            {'column_name': 'currency_conversion_rate', 'value': cast(period_rows.currency_conversion_rate as varchar)}
        ]) as bad
    from period_rows
    left join file_locations on period_rows.filename = file_locations.file
),

final as (
    select
        location,
        source_row,
        _line_key,
        case
            when cost_is_empty then 'an empty cost'
            else concat(bad.column_name, ' ', left(bad.value, 40), ' is not a finite number below 10^15')
        end as problem
    from checked
    where cost_is_empty or bad is not null
    order by file_position, file_row_number
    limit 1
)

select * from final;
