-- run_pricing: each run's GPU-hours and their cost by how they were priced.

-- name: insert
-- Rebuilds run_pricing from the allocations with GPU-hours, each joined to its line item's
-- PricingCategory and CommitmentDiscountType (the macro pricing_type, sql/schema/macros.sql).
delete from run_pricing;

insert into run_pricing by name
with allocations as (
    select x_LineItemKey, training_run, BillingCurrency, ResourceId, effective_cost, gpu_hours
    from cost_allocations
    where training_run is not null and gpu_hours <> 0
),

line_items as (
    select x_LineItemKey, PricingCategory, CommitmentDiscountType
    from focus_line_items
    where x_GpuHours <> 0
),

priced as (
    select
        allocations.training_run,
        allocations.BillingCurrency as currency,
        pricing_type(line_items.PricingCategory, line_items.CommitmentDiscountType) as pricing,
        allocations.ResourceId as resource_id,
        allocations.effective_cost,
        allocations.gpu_hours
    from allocations
    inner join line_items on allocations.x_LineItemKey = line_items.x_LineItemKey
),

by_pricing as (
    select
        training_run,
        currency,
        pricing,
        sum(gpu_hours) as gpu_hours,
        sum(effective_cost) as effective_cost,
        count(distinct resource_id) as resources
    from priced
    group by training_run, currency, pricing
),

final as (
    select
        training_run,
        pricing,
        currency,
        gpu_hours,
        effective_cost,
        resources,
        decimal_divide(effective_cost, gpu_hours) as cost_per_gpu_hour,
        decimal_divide(gpu_hours, sum(gpu_hours) over (partition by training_run, currency)) as gpu_hours_share
    from by_pricing
)

select * from final
order by training_run, pricing, currency;
