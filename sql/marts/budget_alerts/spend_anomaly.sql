-- budget_alerts of kind `daily_spend_anomaly` beyond runs (training_run NULL): the organisation's
-- usage spend per cost category, and its unattributed usage spend per account (SubAccountId) and
-- service, each a series per currency judged by daily_spend_anomalies at the top-level levels
-- ($anomaly_warning, $anomaly_over).
-- Lines a day long or shorter count (usage, not month-long fees). A cost category's day leaves out
-- the spend of the runs starting then (a run's first $anomaly_trailing_days days from its first
-- day of own usage, not a shared rule's): a run starting is planned growth its own budget watches,
-- and once its days fill the trailing window they are in the median. The unattributed series are
-- the spend of unattributed_costs: a shared cluster's idle capacity is not in them (idle_gpus
-- alerts and cluster_utilization show it).
insert into budget_alerts by name
with usage as (
    select
        cast(ChargePeriodStart as date) as charge_day,
        BillingCurrency as currency,
        x_CostCategory as cost_category,
        SubAccountId as account,
        ServiceName as service,
        training_run,
        allocation_method,
        effective_cost
    from cost_allocations
    where ChargePeriodEnd <= ChargePeriodStart + interval 1 day
),

run_starts as (
    select training_run, min(charge_day) as first_usage_day
    from usage
    where training_run is not null and allocation_method <> 'shared'
    group by training_run
),

category_days as (
    select
        'spend of cost category ' || usage.cost_category || ' (' || coalesce(usage.currency, 'no currency') || ')'
            as series,
        usage.currency,
        usage.charge_day,
        sum(usage.effective_cost) as day_cost,
        sum(usage.effective_cost) - coalesce(
            sum(usage.effective_cost) filter (
                where run_starts.first_usage_day > usage.charge_day - cast($anomaly_trailing_days as integer)
            ),
            0
        ) as observed
    from usage
    left join run_starts on usage.training_run = run_starts.training_run
    group by usage.cost_category, usage.currency, usage.charge_day
),

unattributed_days as (
    select
        'unattributed spend of account ' || coalesce(account, 'none') || ', service ' || coalesce(service, 'none')
        || ' (' || coalesce(currency, 'no currency') || ')' as series,
        currency,
        charge_day,
        sum(effective_cost) as day_cost,
        sum(effective_cost) as observed
    from usage
    where training_run is null and allocation_method <> 'idle_capacity'
    group by account, service, currency, charge_day
),

series_days as (
    select * from category_days
    union all
    select * from unattributed_days
),

levels as (  -- noqa: ST03
    select distinct
        series_days.series,
        threshold_levels.threshold,
        threshold_levels.threshold_fraction
    from series_days
    cross join (
        values ('warning', cast($anomaly_warning as decimal(38, 10))), ('over', cast($anomaly_over as decimal(38, 10)))
    ) as threshold_levels (threshold, threshold_fraction)
),

anomalies as (
    select *
    from daily_spend_anomalies(
        series_days, levels, cast($anomaly_trailing_days as integer), cast($anomaly_minimum_days as integer)
    )
),

currencies as (
    select distinct series, currency from series_days
),

final as (
    select
        anomalies.threshold,
        anomalies.threshold_fraction,
        anomalies.threshold_amount,
        anomalies.charge_day as crossed_on,
        anomalies.day_cost as cumulative_cost,
        currencies.currency,
        sources_as_of.as_of,
        'daily_spend_anomaly' as kind,
        currencies.currency as unit,
        anomalies.observed,
        anomalies.series,
        budget_alert_detail(
            anomalies.series,
            'daily_spend_anomaly',
            anomalies.observed,
            currencies.currency,
            anomalies.threshold,
            anomalies.threshold_amount,
            anomalies.threshold_fraction,
            anomalies.charge_day
        ) as detail
    from anomalies
    inner join currencies on anomalies.series = currencies.series
    cross join (select max(as_of) as as_of from source_as_of()) as sources_as_of
)

select * from final;
