-- run_resource_costs: the allocations per run and resource the run reports read (an internal table,
-- sql/schema/run_resource_costs.sql), built with run_costs.

-- name: insert
-- Every allocation, attributed or not, summed per run, billing period, currency, provider, account,
-- service, cost category, resource and allocation rule; a commitment rule's charge of unused
-- commitment (is_commitment_charge) names the commitment. Rebuilt whole.
delete from run_resource_costs;

insert into run_resource_costs by name
with unused_commitments as (
    select x_LineItemKey, CommitmentDiscountId, CommitmentDiscountType
    from focus_line_items
    where CommitmentDiscountStatus = 'Unused'
),

allocations as (
    select
        cost_allocations.*,
        unused_commitments.x_LineItemKey is not null as unused_commitment,
        unused_commitments.CommitmentDiscountId,
        unused_commitments.CommitmentDiscountType
    from cost_allocations
    left join unused_commitments
        on cost_allocations.x_LineItemKey = unused_commitments.x_LineItemKey
        and is_commitment_charge(cost_allocations.allocation_method, cost_allocations.allocation_rule)
),

final as (
    select
        training_run,
        BillingPeriodStart as billing_period_start,
        BillingCurrency as currency,
        ProviderName as provider,
        SubAccountId as account,
        ServiceName as service,
        x_CostCategory as cost_category,
        ResourceId as resource,
        allocation_rule,
        unused_commitment,
        CommitmentDiscountId as commitment_id,
        CommitmentDiscountType as commitment_type,
        sum(effective_cost) as effective_cost,
        sum(gpu_hours) as gpu_hours,
        min(coalesce(ChargePeriodStart, BillingPeriodStart)) as first_charge,
        max(coalesce(ChargePeriodEnd, ChargePeriodStart, BillingPeriodStart)) as last_charge,
        min(ChargePeriodStart) as first_charge_start,
        max(ChargePeriodEnd) as last_charge_end
    from allocations
    group by all
)

select * from final;

-- name: count
-- Rows of run_resource_costs.
select count(*) from run_resource_costs;
