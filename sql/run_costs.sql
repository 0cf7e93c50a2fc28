-- Attributed spend per run, category and billing period (the month; GCP periods start at
-- Pacific midnight, AWS at UTC midnight, both are the same billing month).
create or replace view run_costs as
with allocations as (
    select
        *,
        cast(date_trunc('month', BillingPeriodStart) as date) as billing_period
    from cost_allocations
    where training_run is not null
),

final as (
    select
        training_run,
        any_value(experiment) filter (where experiment is not null) as experiment,
        any_value(dataset_version) filter (where dataset_version is not null) as dataset_version,
        any_value(owner) filter (where owner is not null) as owner,
        x_CostCategory as cost_category,
        billing_period,
        BillingCurrency as currency,
        sum(billed_cost) as billed_cost,
        sum(effective_cost) as effective_cost,
        sum(gpu_hours) as gpu_hours,
        min(ChargePeriodStart) as first_charge,
        max(ChargePeriodEnd) as last_charge
    from allocations
    group by training_run, x_CostCategory, billing_period, BillingCurrency
)

select * from final
