-- Integer shares of the unused commitment rows commitment rules took (attribution.commitments),
-- added to step 4's allocation_shares once steps 1-3 of the period are in cost_allocations (this
-- connection only):
--   covered_usage: by each run's effective cost, from steps 1-3, of the usage the same commitment
--     (CommitmentDiscountId) covered in the same billing period and currency (runs whose total is > 0);
--   fixed: by the rule's weights (they sum to 1), whether the run used the commitment or not.
-- A row whose rule finds no run stays unattributed with a rule saying so.
insert into allocation_shares by name
with line_items as (
    select
        focus_line_items.rowid as line_row,
        focus_line_items.BillingCurrency,
        focus_line_items.CommitmentDiscountId,
        commitment_line_rules.rule_name
    from focus_line_items
    inner join commitment_line_rules on focus_line_items.rowid = commitment_line_rules.line_row
    where in_billing_period(focus_line_items.BillingPeriodStart, $billing_period)
),

rules as (
    select * from commitment_rules
),

-- the period's usage each charged commitment covered: its Used rows of ChargeCategory Usage
covered_lines as (
    select x_LineItemKey, CommitmentDiscountId
    from focus_line_items
    where in_billing_period(BillingPeriodStart, $billing_period)
        and CommitmentDiscountStatus = 'Used'
        and ChargeCategory = 'Usage'
        and x_DerivedFrom is null
        and CommitmentDiscountId in (select CommitmentDiscountId from line_items)
),

allocations as (
    select x_LineItemKey, BillingCurrency, training_run, effective_cost
    from cost_allocations
    where in_billing_period(BillingPeriodStart, $billing_period)
        and allocation_method in ('tag', 'resource_tags', 'registry')
),

covered_usage as (
    select
        covered_lines.CommitmentDiscountId,
        allocations.BillingCurrency,
        allocations.training_run,
        units(sum(allocations.effective_cost)) as effective_units
    from allocations
    inner join covered_lines on allocations.x_LineItemKey = covered_lines.x_LineItemKey
    group by covered_lines.CommitmentDiscountId, allocations.BillingCurrency, allocations.training_run
    having sum(allocations.effective_cost) > 0
),

run_shares as (
    select
        line_items.line_row,
        covered_usage.training_run,
        rules.rule_name,
        rules.split,
        covered_usage.effective_units as share,
        sum(covered_usage.effective_units) over (partition by line_items.line_row) as total_share
    from line_items
    inner join rules on line_items.rule_name = rules.rule_name
    inner join covered_usage
        on line_items.CommitmentDiscountId = covered_usage.CommitmentDiscountId
        and line_items.BillingCurrency is not distinct from covered_usage.BillingCurrency
    where rules.split = 'covered_usage'

    union all

    select * from fixed_split_shares('commitment_line_rules', 'commitment_rules', 'commitment_rule_weights')
),

final as (
    select
        line_row,
        training_run,
        'shared' as allocation_method,
        'commitment ' || rule_name || ' (' || split || ')' as allocation_rule,
        share,
        total_share
    from run_shares

    union all

    select
        line_items.line_row,
        null as training_run,
        'unattributed' as allocation_method,
        'commitment ' || line_items.rule_name || ': no covered usage to charge' as allocation_rule,
        cast(1 as hugeint) as share,
        cast(1 as hugeint) as total_share
    from line_items
    anti join run_shares on line_items.line_row = run_shares.line_row
)

select * from final
