-- Budgeted runs with allocations billed in another currency than their budget's. RunLedger does
-- not convert currencies, so budget_variance is not built while any row is returned.
with baselines as (
    select distinct training_run, currency, budget_file from budget_baselines
),

allocations as (
    select distinct training_run, BillingCurrency
    from cost_allocations
    where training_run is not null and BillingCurrency is not null
),

final as (
    select
        baselines.training_run,
        baselines.budget_file,
        baselines.currency as budget_currency,
        string_agg(allocations.BillingCurrency, ', ' order by allocations.BillingCurrency)
            as billing_currencies
    from baselines
    inner join allocations
        on allocations.training_run = baselines.training_run
        and allocations.BillingCurrency <> baselines.currency
    group by baselines.training_run, baselines.budget_file, baselines.currency
)

select * from final
order by training_run
