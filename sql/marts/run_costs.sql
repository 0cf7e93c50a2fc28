-- run_costs: attributed spend per run, cost category and billing period (a table, sql/schema/run_costs.sql).

-- name: insert
-- Attributed spend per run, category and billing period (the month; GCP periods start at
-- Pacific midnight, AWS at UTC midnight, both are the same billing month). A run's experiment,
-- dataset version, owner and custom dimensions are `run_dimensions` over every period (sql/schema/macros.sql: the
-- registry's, else the value carrying most of the run's effective spend), so every row of a run
-- names the same ones whatever its lines' own tags said. Rebuilt whole.
delete from run_costs;

insert into run_costs by name
with allocations as (
    select
        *,
        cast(date_trunc('month', BillingPeriodStart) as date) as billing_period
    from cost_allocations
    where training_run is not null
),

dimensions as (
    select * from run_dimensions(null, null)
),

spend as (
    select
        training_run,
        x_CostCategory as cost_category,
        billing_period,
        BillingCurrency as currency,
        sum(billed_cost) as billed_cost,
        sum(effective_cost) as effective_cost,
        sum(gpu_hours) as gpu_hours,
        min(ChargePeriodStart) as first_charge,
        max(ChargePeriodEnd) as last_charge
    from allocations
    group by training_run, x_CostCategory, billing_period, BillingCurrency
),

final as (
    select
        spend.training_run,
        dimensions.experiment,
        dimensions.dataset_version,
        dimensions.owner,
        dimensions.custom_dimensions,
        spend.cost_category,
        spend.billing_period,
        spend.currency,
        spend.billed_cost,
        spend.effective_cost,
        spend.gpu_hours,
        spend.first_charge,
        spend.last_charge
    from spend
    left join dimensions on spend.training_run = dimensions.training_run
)

select * from final
order by training_run, billing_period, cost_category, currency;

-- name: preview
-- Attributed spend per training run over every billing period: the asset's Markdown preview.
with costs as (
    select *
    from run_costs
    where training_run is not null
),

final as (
    select
        training_run,
        currency,
        sum(billed_cost) as billed_cost,
        sum(effective_cost) as effective_cost,
        sum(gpu_hours) as gpu_hours
    from costs
    group by training_run, currency
)

select * from final
order by effective_cost desc, training_run;

-- name: count
-- Rows of run_costs.
select count(*) from run_costs
where training_run is not null;
