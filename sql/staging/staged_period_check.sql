-- Rows of a staged period, its totals, and rows whose billing period is not the expected one.
with staged as (
    select * from read_parquet($staging_file)
),

final as (
    select
        count(*) as rows,
        coalesce(sum(BilledCost), 0) as billed_cost,
        coalesce(sum(EffectiveCost), 0) as effective_cost,
        count(*) filter (where date_trunc('month', BillingPeriodStart) <> $billing_period) as rows_outside_period,
        any_value(x_SourceFile) filter (where date_trunc('month', BillingPeriodStart) <> $billing_period)
            as file_outside_period,
        count(distinct BillingCurrency) as currencies,
        string_agg(distinct BillingCurrency, ',' order by BillingCurrency) as currency_list
    from staged
)

select * from final
