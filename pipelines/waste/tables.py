"""Writes the `waste` table; the caller owns the transaction."""

import duckdb

from pipelines.attribution.allocate import ALLOCATIONS_STEP
from pipelines.warehouse.sql import read_sql
from pipelines.warehouse.step_inputs import WHOLE, StepInputs, step_inputs
from pipelines.waste.settings import Waste

WASTE_STEP = "waste"  # its step_inputs row: one, the table is built whole


def waste_inputs(conn: duckdb.DuckDBPyConnection, settings: Waste) -> StepInputs:
    """The inputs of a `waste` build now: the periods' allocation digests, the run events, budget
    baselines, run registry and waste settings (sql/ops/waste_inputs.sql), so an unchanged night
    skips reading every allocation again (27 s of a 20M-line re-run).

    Args:
        conn: a writable warehouse connection, inside the build's transaction.
        settings: the `waste:` section of the configuration.
    """
    return step_inputs(
        conn,
        WASTE_STEP,
        WHOLE,
        read_sql("ops/waste_inputs", "digest"),
        {"settings": settings.model_dump_json(), "allocations_step": ALLOCATIONS_STEP},
    )


def build_waste(conn: duckdb.DuckDBPyConnection, settings: Waste) -> int:
    """Rebuilds `waste` from the attributed spend, budgets, registry and run events.

    Args:
        conn: a writable warehouse connection, inside the caller's transaction.
        settings: the `waste:` section of the configuration (checkpoint and transfer globs).

    Returns:
        The number of waste items written.
    """
    conn.execute(
        read_sql("marts/waste", "insert"),
        {
            "checkpoint_resources": [pattern.lower() for pattern in settings.checkpoint_resources],
            "inter_region_transfer": [pattern.lower() for pattern in settings.inter_region_transfer],
        },
    )
    (rows,) = conn.execute(read_sql("marts/waste", "count")).fetchone()
    return rows
