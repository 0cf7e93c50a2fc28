-- budget_alerts of kind `idle_gpus`, inserted after the shared parts of sql/marts/budget_alerts.sql.

-- Kind idle_gpus: GPU-instance hours charged with no run, in stretches of back-to-back charge
-- periods; the first day a stretch of the instance was longer than a level ($idle_warning_hours,
-- $idle_over_hours). A shared cluster node's hour that some job held is not idle (its idle part is
-- the cluster's utilization); an hour no job held is.
insert into budget_alerts by name
with held_lines as (
    select distinct x_LineItemKey
    from cost_allocations
    where allocation_method = 'cluster'
),

idle_periods as (
    select
        ResourceId as resource_id,
        BillingCurrency as currency,
        ChargePeriodStart as period_start,
        ChargePeriodEnd as period_end,
        sum(effective_cost) as period_cost
    from cost_allocations
    anti join held_lines on cost_allocations.x_LineItemKey = held_lines.x_LineItemKey
    where cost_allocations.training_run is null
        and cost_allocations.gpu_hours > 0
        and cost_allocations.ResourceId is not null
    group by all
),

idle_stretches as (
    select
        *,
        sum(case when previous_end >= period_start then 0 else 1 end)
            over (partition by resource_id, currency order by period_start) as stretch
    from (
        select
            *,
            lag(period_end) over (partition by resource_id, currency order by period_start) as previous_end
        from idle_periods
    ) as idle_with_previous
),

idle_cumulative as (
    select
        resource_id,
        currency,
        stretch,
        period_start,
        decimal_divide(
            sum(date_diff('second', period_start, period_end))
                over (partition by resource_id, currency, stretch order by period_start),
            3600
        ) as idle_hours,
        sum(period_cost) over (partition by resource_id, currency, stretch order by period_start) as idle_cost
    from idle_stretches
),

idle_levels as (
    select 'warning' as threshold, cast($idle_warning_hours as decimal(38, 10)) as threshold_fraction
    union all
    select 'over' as threshold, cast($idle_over_hours as decimal(38, 10)) as threshold_fraction
),

alerts as (
    select
        null as training_run,
        idle_levels.threshold,
        idle_levels.threshold_fraction,
        null as estimated_cost,
        idle_levels.threshold_fraction as threshold_amount,
        cast(min(idle_cumulative.period_start) as date) as crossed_on,
        arg_min(idle_cumulative.idle_cost, idle_cumulative.period_start) as cumulative_cost,
        idle_cumulative.currency,
        'idle_gpus' as kind,
        'hours' as unit,
        arg_min(idle_cumulative.idle_hours, idle_cumulative.period_start) as observed,
        idle_cumulative.resource_id
    from idle_cumulative
    cross join idle_levels
    where idle_cumulative.idle_hours > idle_levels.threshold_fraction
    group by
        idle_cumulative.resource_id, idle_cumulative.currency, idle_levels.threshold, idle_levels.threshold_fraction
),

-- an idle GPU's as_of: the newest of any source
final as (
    select
        alerts.*,
        sources_as_of.as_of,
        budget_alert_detail(
            alerts.resource_id,
            alerts.kind,
            alerts.observed,
            alerts.unit,
            alerts.threshold,
            alerts.threshold_amount,
            alerts.threshold_fraction,
            alerts.crossed_on
        ) as detail
    from alerts
    cross join (select max(as_of) as as_of from source_as_of()) as sources_as_of
)

select * from final;
