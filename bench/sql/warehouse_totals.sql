-- What the bench checks after a nightly run: rows kept (and the rows derived beside them: the
-- unused part of commitment fees), allocations, and conservation.
with focus as (
    select
        count(*) as focus_rows,
        count(x_DerivedFrom) as derived_rows,
        coalesce(sum(BilledCost), 0) as focus_billed_cost
    from focus_line_items
),

allocations as (
    select count(*) as allocation_rows, coalesce(sum(billed_cost), 0) as allocated_billed_cost from cost_allocations
),

reconciliation_failures as (
    select count(*) as reconciliation_failures
    from reconciliation
    where rows_raw_focus_diff <> 0
        or rows_focus_allocated_diff <> 0
        or billed_raw_focus_diff <> 0
        or billed_focus_allocated_diff <> 0
        or effective_focus_allocated_diff <> 0
),

final as (
    select * from focus, allocations, reconciliation_failures
)

select * from final
