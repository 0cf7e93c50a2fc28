-- One run's report header: what it trained, who owns it, its budget window, thresholds and as-of.
-- Always one row; columns are null where the warehouse does not know.
with allocations as (
    select * from cost_allocations where training_run = $training_run
),

allocated as (
    select
        any_value(experiment) filter (where experiment is not null) as experiment,
        any_value(dataset_version) filter (where dataset_version is not null) as dataset_version,
        any_value(owner) filter (where owner is not null) as owner,
        list(distinct BillingCurrency order by BillingCurrency)
            filter (where BillingCurrency is not null) as billed_currencies,
        list(distinct cast(BillingPeriodStart as date) order by cast(BillingPeriodStart as date))
            as billing_periods,
        min(coalesce(ChargePeriodStart, BillingPeriodStart)) as first_charge,
        max(coalesce(ChargePeriodEnd, ChargePeriodStart, BillingPeriodStart)) as last_charge
    from allocations
),

registry as (
    select
        any_value(experiment) as experiment,
        any_value(dataset_version) as dataset_version,
        any_value(owner) as owner
    from run_registry
    where training_run = $training_run
),

baseline as (
    select
        count(*) as baseline_rows,
        any_value(currency) as currency,
        any_value(thresholds.warning) as warning_threshold,
        any_value(thresholds."over") as over_threshold,
        any_value("window"."start") as window_start,
        any_value("window"."end") as window_end
    from budget_baselines
    where training_run = $training_run
),

variance as (
    select
        count(*) filter (where estimated_cost is not null) as estimated_rows,
        any_value(currency) filter (where currency is not null) as currency,
        any_value(status) filter (where cost_category = 'total') as total_status,
        max(as_of) as as_of
    from budget_variance
    where training_run = $training_run
),

final as (
    select
        $training_run as training_run,
        coalesce(allocated.experiment, registry.experiment) as experiment,
        coalesce(allocated.dataset_version, registry.dataset_version) as dataset_version,
        coalesce(allocated.owner, registry.owner) as owner,
        coalesce(
            baseline.currency,
            variance.currency,
            nullif(array_to_string(allocated.billed_currencies, ', '), '')
        ) as currency,
        baseline.baseline_rows > 0 or variance.estimated_rows > 0 as has_budget,
        baseline.window_start,
        baseline.window_end,
        baseline.warning_threshold,
        baseline.over_threshold,
        variance.total_status,
        variance.as_of,
        allocated.billing_periods,
        allocated.first_charge,
        allocated.last_charge
    from allocated
    cross join registry
    cross join baseline
    cross join variance
)

select * from final
