-- Commitment chargeback, before step 4: which rule of attribution.commitments takes each unused
-- commitment row no run claimed.

-- name: match
-- The rows of unused commitment (CommitmentDiscountStatus Unused) that steps 1-3 left unattributed,
-- each with the first rule in configured order whose glob matches its CommitmentDiscountId (this
-- connection only). Globs are DuckDB's GLOB, case-sensitive like the shared-cost rules'.
create or replace temp table commitment_line_rules as
with unclaimed as (
    select line_row
    from allocation_shares
    where allocation_method = 'unattributed' and allocation_rule is null
),

unused_lines as (
    select focus_line_items.rowid as line_row, focus_line_items.CommitmentDiscountId
    from focus_line_items
    semi join unclaimed on focus_line_items.rowid = unclaimed.line_row
    where in_billing_period(focus_line_items.BillingPeriodStart, $billing_period)
        and focus_line_items.CommitmentDiscountStatus = 'Unused'
),

rules as (
    select * from commitment_rules
),

rule_matches as (
    select unused_lines.line_row, rules.rule_name, rules.priority
    from unused_lines
    inner join rules on unused_lines.CommitmentDiscountId glob rules.pattern
),

final as (
    select line_row, arg_min(rule_name, priority) as rule_name
    from rule_matches
    group by line_row
)

select * from final;

-- name: drop_from_shares
-- Rows a commitment rule takes leave the step 1-3 shares (no shared-cost rule sees them); their
-- shares are added after steps 1-3 are written (sql/attribution/commitment_shares.sql).
delete from allocation_shares
where line_row in (select line_row from commitment_line_rules);
