"""Writes the `waste` table; the caller owns the transaction."""

from datetime import UTC, datetime

import duckdb

from pipelines.config import Waste
from pipelines.warehouse.sql import read_sql


def build_waste_if_changed(conn: duckdb.DuckDBPyConnection, settings: Waste) -> bool:
    """Rebuilds `waste` unless it was built from the same inputs, and records them.

    The inputs are the periods' allocation digests, the run events, budget baselines, run
    registry and waste settings (sql/ops/waste_inputs.sql): an unchanged night skips reading
    every allocation again (27 s of a 20M-line re-run).

    Args:
        conn: a writable warehouse connection, inside the caller's transaction.
        settings: the `waste:` section of the configuration.

    Returns:
        True when `waste` was rebuilt.
    """
    (digest,) = conn.execute(
        read_sql("ops/waste_inputs", "digest"), {"settings": settings.model_dump_json()}
    ).fetchone()
    recorded = conn.execute(read_sql("ops/waste_inputs", "recorded")).fetchone()
    if recorded and recorded[0] == digest:
        return False
    build_waste(conn, settings)
    conn.execute(read_sql("ops/waste_inputs", "delete"))
    conn.execute(
        read_sql("ops/waste_inputs", "insert"),
        {"inputs_digest": digest, "built_at": datetime.now(UTC).replace(tzinfo=None)},
    )
    return True


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
