-- The report header of each run in $training_runs: what it trained, who owns it, its budget
-- window, thresholds and as-of. One row per run; columns are null where the warehouse does not know.
-- Experiment, dataset version, owner and custom dimensions are `run_dimensions` over every period
-- (sql/schema/macros.sql: the registry's, else the value carrying most of the run's effective
-- spend), so a report names what run_costs names; a run without attributed spend has its
-- registry's. fully_loaded_cost: the run's run_costs_fully_loaded over every period, when it is
-- billed in one currency.
with requested as (
    select distinct unnest($training_runs) as training_run
),

allocations as (
    select * from cost_allocations
    where training_run in (select training_run from requested)
),

dimensions as (
    select * from run_dimensions(null, null)
    where training_run in (select training_run from requested)
),

allocated as (
    select
        training_run,
        list(distinct BillingCurrency order by BillingCurrency)
            filter (where BillingCurrency is not null) as billed_currencies,
        list(distinct cast(BillingPeriodStart as date) order by cast(BillingPeriodStart as date))
            as billing_periods,
        min(coalesce(ChargePeriodStart, BillingPeriodStart)) as first_charge,
        max(coalesce(ChargePeriodEnd, ChargePeriodStart, BillingPeriodStart)) as last_charge
    from allocations
    group by training_run
),

-- where the planned burn starts: the run's first start event, else its first charge
first_starts as (
    select training_run, min(event_time) as first_start
    from run_events
    where event in ('start', 'resume') and training_run in (select training_run from requested)
    group by training_run
),

-- every billing source's as_of (macro source_as_of), shown when they differ
sources as (
    select map(list(source_name order by source_name), list(as_of order by source_name)) as sources_as_of
    from source_as_of()
),

baseline as (
    select
        training_run,
        count(*) as baseline_rows,
        any_value(currency) as currency,
        any_value(thresholds.warning) as warning_threshold,
        -- "over" and "start" are DuckDB keywords naming struct fields: they stay quoted, as "end" must
        any_value(thresholds."over") as over_threshold,  -- noqa: RF06
        any_value("window"."start") as window_start,  -- noqa: RF06
        any_value("window"."end") as window_end,
        any_value(estimated_wall_clock_hours) filter (where cost_category = 'compute') as planned_wall_clock_hours
    from budget_baselines
    group by training_run
),

variance as (
    select
        training_run,
        count(*) filter (where estimated_cost is not null) as estimated_rows,
        any_value(currency) filter (where currency is not null) as currency,
        any_value(status) filter (where cost_category = 'total') as total_status,
        max(as_of) as as_of
    from budget_variance
    group by training_run
),

fully_loaded as (
    select
        training_run,
        if(count(distinct currency) = 1, sum(fully_loaded_cost), null) as fully_loaded_cost
    from run_costs_fully_loaded
    where training_run in (select training_run from requested)
    group by training_run
),

final as (
    select
        requested.training_run,
        dimensions.experiment,
        dimensions.dataset_version,
        dimensions.owner,
        coalesce(dimensions.custom_dimensions, map()) as custom_dimensions,
        coalesce(
            baseline.currency,
            variance.currency,
            nullif(array_to_string(allocated.billed_currencies, ', '), '')
        ) as currency,
        coalesce(baseline.baseline_rows, 0) > 0 or coalesce(variance.estimated_rows, 0) > 0 as has_budget,
        baseline.window_start,
        baseline.window_end,
        baseline.warning_threshold,
        baseline.over_threshold,
        variance.total_status,
        variance.as_of,
        allocated.billing_periods,
        allocated.first_charge,
        allocated.last_charge,
        coalesce(first_starts.first_start, allocated.first_charge) as planned_start,
        baseline.planned_wall_clock_hours,
        sources.sources_as_of,
        fully_loaded.fully_loaded_cost
    from requested
    left join allocated on requested.training_run = allocated.training_run
    left join dimensions on requested.training_run = dimensions.training_run
    left join baseline on requested.training_run = baseline.training_run
    left join variance on requested.training_run = variance.training_run
    left join first_starts on requested.training_run = first_starts.training_run
    left join fully_loaded on requested.training_run = fully_loaded.training_run
    cross join sources
)

select * from final
order by training_run
