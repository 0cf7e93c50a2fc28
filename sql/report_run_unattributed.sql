-- The largest unattributed resources in the accounts a run used, in the billing periods it ran,
-- with how many such resources there are and their total (report_unattributed_costs: see
-- report_unattributed_snapshot.sql).
with run_accounts as (
    select distinct SubAccountId as account, cast(BillingPeriodStart as date) as billing_period
    from cost_allocations
    where training_run = $training_run
),

candidates as (
    select report_unattributed_costs.*
    from report_unattributed_costs
    where report_unattributed_costs.account in (select account from run_accounts)
        and report_unattributed_costs.billing_period in (select billing_period from run_accounts)
),

final as (
    select
        provider,
        account,
        service,
        resource,
        billing_period,
        currency,
        cost_category,
        effective_cost,
        share_of_period,
        count(*) over () as candidate_rows,
        sum(effective_cost) over () as candidates_effective_cost
    from candidates
)

select * from final
order by effective_cost desc, billing_period, provider, account, service, resource
limit $row_limit
