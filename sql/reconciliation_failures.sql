-- Rows of the reconciliation view with any non-zero difference.
select *
from reconciliation
where rows_raw_focus_diff <> 0
    or rows_focus_allocated_diff <> 0
    or billed_raw_focus_diff <> 0
    or billed_focus_allocated_diff <> 0
    or effective_focus_allocated_diff <> 0
