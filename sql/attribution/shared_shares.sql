-- Integer shares of the lines shared-cost rules took (attribution step 4), read after steps 1-3 of
-- the period are in cost_allocations (this connection only). The runs a line is shared among are
-- those with step 1-3 allocations in the same billing period, provider and currency:
--   proportional: by each run's effective cost from steps 1-3 (runs whose total is > 0);
--   even: equally among the runs with any step 1-3 allocation;
--   fixed: by the rule's weights (they sum to 1), whether the run has spend or not.
-- A line whose rule finds no run stays unattributed with a rule saying so.
delete from allocation_shares;

insert into allocation_shares by name
with line_items as (
    select
        focus_line_items.rowid as line_row,
        focus_line_items.ProviderName,
        focus_line_items.BillingCurrency,
        shared_line_rules.rule_name
    from focus_line_items
    inner join shared_line_rules on focus_line_items.rowid = shared_line_rules.line_row
    where in_billing_period(focus_line_items.BillingPeriodStart, $billing_period)
),

rules as (
    select * from shared_rules
),

run_spend as (
    select
        ProviderName,
        BillingCurrency,
        training_run,
        units(sum(effective_cost)) as effective_units
    from cost_allocations
    where in_billing_period(BillingPeriodStart, $billing_period)
        and allocation_method in ('tag', 'resource_tags', 'registry')
    group by ProviderName, BillingCurrency, training_run
),

proportional_totals as (
    select ProviderName, BillingCurrency, sum(effective_units) as total_units
    from run_spend
    where effective_units > 0
    group by ProviderName, BillingCurrency
),

even_totals as (
    select ProviderName, BillingCurrency, count(*) as run_count
    from run_spend
    group by ProviderName, BillingCurrency
),

run_shares as (
    select
        line_items.line_row,
        run_spend.training_run,
        rules.rule_name,
        rules.split,
        case rules.split
            when 'proportional' then run_spend.effective_units
            else cast(1 as hugeint)
        end as share,
        case rules.split
            when 'proportional' then proportional_totals.total_units
            else cast(even_totals.run_count as hugeint)
        end as total_share
    from line_items
    inner join rules on line_items.rule_name = rules.rule_name
    inner join run_spend
        on line_items.ProviderName is not distinct from run_spend.ProviderName
        and line_items.BillingCurrency is not distinct from run_spend.BillingCurrency
    left join proportional_totals
        on run_spend.ProviderName is not distinct from proportional_totals.ProviderName
        and run_spend.BillingCurrency is not distinct from proportional_totals.BillingCurrency
    left join even_totals
        on run_spend.ProviderName is not distinct from even_totals.ProviderName
        and run_spend.BillingCurrency is not distinct from even_totals.BillingCurrency
    where rules.split = 'even' or (rules.split = 'proportional' and run_spend.effective_units > 0)

    union all

    select * from fixed_split_shares('shared_line_rules', 'shared_rules', 'shared_rule_weights')
),

final as (
    select
        line_row,
        training_run,
        'shared' as allocation_method,
        'shared ' || rule_name || ' (' || split || ')' as allocation_rule,
        share,
        total_share
    from run_shares

    union all

    select
        line_items.line_row,
        null as training_run,
        'unattributed' as allocation_method,
        'shared ' || line_items.rule_name || ': no runs to share with' as allocation_rule,
        cast(1 as hugeint) as share,
        cast(1 as hugeint) as total_share
    from line_items
    anti join run_shares on line_items.line_row = run_shares.line_row
)

select * from final
