-- For each run in $training_runs: the largest unattributed resources ($row_limit per run) in the
-- accounts the run used, in the billing periods it ran, with how many such resources there are
-- and their total (report_unattributed_costs: see report_unattributed_snapshot.sql).
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
    select * from report_unattributed_costs
),

candidates as (
    select run_accounts.training_run, unattributed.*
    from unattributed
    inner join run_accounts on unattributed.account = run_accounts.account
    inner join run_periods
        on run_accounts.training_run = run_periods.training_run
        and unattributed.billing_period = run_periods.billing_period
),

ranked as (
    select
        training_run,
        provider,
        account,
        service,
        resource,
        billing_period,
        currency,
        cost_category,
        effective_cost,
        share_of_period,
        count(*) over run_candidates as candidate_rows,
        sum(effective_cost) over run_candidates as candidates_effective_cost,
        row_number() over (
            partition by training_run
            order by effective_cost desc, billing_period, provider, account, service, resource
        ) as candidate_rank
    from candidates
    window run_candidates as (partition by training_run)
),

final as (
    select * from ranked
    where candidate_rank <= $row_limit
)

select * exclude (candidate_rank) from final
order by training_run, candidate_rank
