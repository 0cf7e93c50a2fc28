"""Rebuilds a summary table (`run_costs`, `unattributed_costs`) only when the tables it is
computed from changed; the caller owns the transaction."""

import duckdb

from pipelines.warehouse.step_inputs import build_if_changed, tables_inputs
from pipelines.warehouse.summaries import RUN_COSTS, UNATTRIBUTED_COSTS, build_summary

# The tables each build reads (its macros' included): while their files are the same, the
# table stands (step_inputs).
SUMMARY_INPUTS = {
    RUN_COSTS: ("cost_allocations", "run_registry"),
    UNATTRIBUTED_COSTS: ("cost_allocations", "focus_line_items"),
}


def build_summary_if_changed(conn: duckdb.DuckDBPyConnection, name: str) -> bool:
    """Rebuilds the summary table `name` unless it was built from the same tables
    (SUMMARY_INPUTS, their files) and SQL, and records them.

    Args:
        conn: a writable warehouse connection on the lake, inside the caller's transaction.
        name: `run_costs` or `unattributed_costs` (its step in step_inputs).

    Returns:
        True when the table was rebuilt.
    """
    inputs = tables_inputs(conn, name, SUMMARY_INPUTS[name], (f"marts/{name}", "schema/macros"))
    return build_if_changed(conn, inputs, lambda: build_summary(conn, name))
