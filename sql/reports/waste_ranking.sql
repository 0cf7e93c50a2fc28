-- Runs and owners ranked by the share of their attributed effective cost that is waste
-- (ties: the larger waste first). `level` is 'run' or 'owner'; owners group their runs.
with costs as (
    select training_run, any_value(owner) as owner, any_value(currency) as currency,
        sum(effective_cost) as attributed_cost
    from run_costs
    group by training_run
),

waste_items as (
    select training_run, sum(effective_cost) as waste_cost
    from waste
    group by training_run
),

runs as (
    select
        'run' as level,
        costs.training_run as name,
        costs.owner,
        costs.currency,
        1 as runs,
        costs.attributed_cost,
        coalesce(waste_items.waste_cost, 0) as waste_cost
    from costs
    left join waste_items on costs.training_run = waste_items.training_run
),

owners as (
    select
        'owner' as level,
        coalesce(owner, '(no owner)') as name,
        coalesce(owner, '(no owner)') as owner,
        currency,
        count(*) as runs,
        sum(attributed_cost) as attributed_cost,
        sum(waste_cost) as waste_cost
    from runs
    group by coalesce(owner, '(no owner)'), currency
),

final as (
    select *, decimal_divide(waste_cost, attributed_cost) as waste_share
    from (
        select * from runs
        union all
        select * from owners
    ) as ranked
)

select * from final
order by level desc, waste_share desc nulls last, waste_cost desc, name
