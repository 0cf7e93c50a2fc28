-- Attributed spend per training run over every billing period, and the run_costs rows behind it:
-- the asset's Markdown preview and row count from one read of the view.
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
        sum(gpu_hours) as gpu_hours,
        count(*) as view_rows
    from costs
    group by training_run, currency
)

select * from final
order by effective_cost desc, training_run
