-- The largest unattributed resources of the given billing periods: who to ask for tags.
with unattributed as (
    select *
    from unattributed_costs
    where billing_period in (select unnest($billing_periods::date[]))
),

final as (
    select billing_period, provider, account, service, resource, owner, currency, effective_cost, share_of_period
    from unattributed
)

select * from final
order by abs(effective_cost) desc, billing_period, provider, service, resource
limit $limit
