"""Writes the `waste` table; the caller owns the transaction."""

from dataclasses import dataclass, field

import duckdb

from pipelines.attribution.allocate import ALLOCATIONS_STEP
from pipelines.config import RunLedgerConfig
from pipelines.plans.settings import LowGpuUtilization
from pipelines.warehouse.sql import read_sql
from pipelines.warehouse.step_inputs import WHOLE, StepInputs, step_inputs
from pipelines.waste.settings import Waste

WASTE_STEP = "waste"  # its step_inputs row: one, the table is built whole


@dataclass(frozen=True)
class WasteSettings:
    """What the waste build takes from the configuration.

    Attributes:
        waste: `waste:` (the checkpoint and transfer globs).
        low_gpu_utilization: `thresholds.low_gpu_utilization`, the level of a run without a budget.
    """

    waste: Waste = field(default_factory=Waste)
    low_gpu_utilization: LowGpuUtilization = field(default_factory=LowGpuUtilization)


def waste_settings(config: RunLedgerConfig) -> WasteSettings:
    """The configuration's `WasteSettings`."""
    return WasteSettings(config.waste, config.thresholds.low_gpu_utilization)


def waste_inputs(conn: duckdb.DuckDBPyConnection, settings: WasteSettings) -> StepInputs:
    """The inputs of a `waste` build now: the periods' allocation digests, the run events, budget
    baselines, run registry and waste settings (sql/ops/waste_inputs.sql), so an unchanged night
    skips reading every allocation again (27 s of a 20M-line re-run).

    Args:
        conn: a writable warehouse connection, inside the build's transaction.
        settings: `waste_settings`.
    """
    return step_inputs(
        conn,
        WASTE_STEP,
        WHOLE,
        read_sql("ops/waste_inputs", "digest"),
        {
            "settings": settings.waste.model_dump_json() + settings.low_gpu_utilization.model_dump_json(),
            "allocations_step": ALLOCATIONS_STEP,
        },
    )


def build_waste(conn: duckdb.DuckDBPyConnection, settings: WasteSettings) -> int:
    """Rebuilds `waste` from the attributed spend, budgets, registry and run events.

    Args:
        conn: a writable warehouse connection, inside the caller's transaction.
        settings: `waste_settings`: checkpoint and transfer globs, the default low-utilization level.

    Returns:
        The number of waste items written.
    """
    conn.execute(
        read_sql("marts/waste", "insert"),
        {
            "checkpoint_resources": [pattern.lower() for pattern in settings.waste.checkpoint_resources],
            "inter_region_transfer": [pattern.lower() for pattern in settings.waste.inter_region_transfer],
            "low_utilization_warning": settings.low_gpu_utilization.warning,
        },
    )
    (rows,) = conn.execute(read_sql("marts/waste", "count")).fetchone()
    return rows
