-- Top unattributed resources of each run's accounts, for the run reports.

-- name: rows
-- For each run in $training_runs: the largest unattributed resources ($row_limit per run) in the
-- accounts the run used, in the billing periods it ran, with how many such resources there are
-- and their total, from the taggable rows of unattributed_costs (the untagged resources, whose cost
-- tagging moves to runs).
with requested as (
    select distinct unnest($training_runs) as training_run
),

-- allocations is read more than once: scanning cost_allocations again costs less than DuckDB
-- materializing every allocation row as a CTE
allocations as not materialized (
    select training_run, SubAccountId, BillingPeriodStart
    from cost_allocations
    where training_run in (select training_run from requested)
),

run_accounts as (
    select distinct training_run, SubAccountId as account
    from allocations
),

run_periods as (
    select distinct training_run, cast(BillingPeriodStart as date) as billing_period
    from allocations
),

unattributed as (
    select * from unattributed_costs
    where taggable
),

-- unattributed rows are disjoint by account and period, so a run's counts and totals add up
-- from its account-periods, and its largest rows are among its account-periods' largest: the
-- ranking sorts those instead of every row once per run sharing the account
account_periods as (
    select account, billing_period, count(*) as period_rows, sum(effective_cost) as period_effective_cost
    from unattributed
    group by account, billing_period
),

account_period_top as (
    select *
    from unattributed
    qualify row_number() over (
        partition by account, billing_period
        order by effective_cost desc, billing_period, provider, account, service, resource
    ) <= $row_limit
),

run_account_periods as (
    select run_accounts.training_run, run_accounts.account, run_periods.billing_period
    from run_accounts
    inner join run_periods on run_accounts.training_run = run_periods.training_run
),

run_totals as (
    select
        run_account_periods.training_run,
        cast(sum(account_periods.period_rows) as bigint) as candidate_rows,
        sum(account_periods.period_effective_cost) as candidates_effective_cost
    from run_account_periods
    inner join account_periods
        on run_account_periods.account = account_periods.account
        and run_account_periods.billing_period = account_periods.billing_period
    group by run_account_periods.training_run
),

candidates as (
    select run_account_periods.training_run, account_period_top.*
    from account_period_top
    inner join run_account_periods
        on account_period_top.account = run_account_periods.account
        and account_period_top.billing_period = run_account_periods.billing_period
),

ranked as (
    select
        candidates.training_run,
        provider,
        account,
        service,
        resource,
        billing_period,
        currency,
        cost_category,
        effective_cost,
        share_of_period,
        run_totals.candidate_rows,
        run_totals.candidates_effective_cost,
        row_number() over (
            partition by candidates.training_run
            order by effective_cost desc, billing_period, provider, account, service, resource
        ) as candidate_rank
    from candidates
    inner join run_totals on candidates.training_run = run_totals.training_run
),

final as (
    select * from ranked
    where candidate_rank <= $row_limit
)

select * exclude (candidate_rank) from final
order by training_run, candidate_rank;

-- name: outside_window
-- For each run in $training_runs: the resources its registry entry names (a glob of its
-- `resources`) charged outside its window, which stay unattributed (rule outside registry window)
-- and are on no tagging worklist: per resource and currency, the first and last charge and the
-- effective cost.
with requested as (
    select distinct unnest($training_runs) as training_run
),

patterns as (
    select training_run, unnest(resources) as pattern
    from run_registry
    where training_run in (select training_run from requested)
),

outside as (
    select ResourceId, BillingCurrency, ChargePeriodStart, ChargePeriodEnd, effective_cost
    from cost_allocations
    where allocation_rule = 'outside registry window'
),

named as (
    select distinct patterns.training_run, resources.ResourceId
    from (select distinct ResourceId from outside) as resources
    inner join patterns on resources.ResourceId glob patterns.pattern
),

final as (
    select
        named.training_run,
        outside.ResourceId as resource,
        outside.BillingCurrency as currency,
        min(outside.ChargePeriodStart) as first_charge,
        max(outside.ChargePeriodEnd) as last_charge,
        sum(outside.effective_cost) as effective_cost
    from named
    inner join outside on named.ResourceId = outside.ResourceId
    group by named.training_run, outside.ResourceId, outside.BillingCurrency
)

select * from final
order by training_run, effective_cost desc, resource, currency;
