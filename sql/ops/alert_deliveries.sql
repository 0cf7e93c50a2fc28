-- alert_deliveries: the ledger of what was delivered to whom, appended and updated by
-- pipelines/budgets/delivery.py, never rebuilt.

-- name: alerts
-- Every alert budget_alerts holds now, under its stable key (run, GPU instance, series or group
-- budget scope_kind=scope@period:kind:threshold, and for daily_spend_anomaly, one alert per day,
-- :day; a restatement that moves another kind's crossing day or amount keeps it), with the run's
-- owner as run_costs names it (an owner's group budget: that owner; none otherwise without a run);
-- amount is the cumulative cost of a cost or group_budget alert, else the value observed in its unit.
with alerts as (
    select * from budget_alerts
),

owners as (
    select training_run, max(owner) as owner
    from run_costs
    group by training_run
),

final as (
    select
        concat_ws(
            ':',
            coalesce(
                alerts.training_run,
                alerts.resource_id,
                alerts.series,
                format('{}={}@{}', alerts.scope_kind, alerts.scope, alerts.period)
            ),
            alerts.kind,
            alerts.threshold,
            if(alerts.kind = 'daily_spend_anomaly', strftime(alerts.crossed_on, '%Y-%m-%d'), null)
        ) as alert_key,
        alerts.training_run,
        if(alerts.scope_kind = 'owner', alerts.scope, owners.owner) as owner,
        alerts.kind,
        alerts.threshold,
        alerts.threshold_fraction,
        alerts.estimated_cost,
        alerts.threshold_amount,
        alerts.crossed_on,
        if(alerts.kind = 'cost', alerts.cumulative_cost, alerts.observed) as amount,
        alerts.currency,
        alerts.unit,
        alerts.detail,
        alerts.scope_kind,
        alerts.scope,
        alerts.period
    from alerts
    left join owners on owners.training_run = alerts.training_run
)

select * from final
order by crossed_on, alert_key;

-- name: latest
-- The last row of every (alert, destination) in the ledger, and the event it was last delivered
-- (told: crossed, resolved, or NULL when nothing reached it yet).
with deliveries as (
    select * from alert_deliveries
),

final as (
    select
        *,
        last_value(case when status = 'delivered' then event end ignore nulls) over (
            partition by alert_key, destination order by sequence
            rows between unbounded preceding and unbounded following
        ) as told
    from deliveries
    qualify row_number() over (partition by alert_key, destination order by sequence desc) = 1
)

select * from final;

-- name: forget
-- Removes one event's row before record writes its new state (a retried or superseded event).
delete from alert_deliveries
where alert_key = $alert_key and destination = $destination and sequence = $sequence;

-- name: record
-- One event's row as the run leaves it.
insert into alert_deliveries (
    alert_key, destination, sequence, event, training_run, owner, kind, threshold, crossed_on, amount,
    threshold_amount, currency, detail, status, attempts, first_attempted_at, last_attempted_at, delivered_at,
    last_error, scope_kind, scope, period
)
values (
    $alert_key, $destination, $sequence, $event, $training_run, $owner, $kind, $threshold, $crossed_on, $amount,
    $threshold_amount, $currency, $detail, $status, $attempts, $first_attempted_at, $last_attempted_at,
    $delivered_at, $last_error, $scope_kind, $scope, $period
);
