"""Inputs digests: a step whose inputs did not change since its last build keeps what it built.

Each step computes the digest of what it reads with its own statement (`sql/ops/allocation_inputs.sql`,
`sql/ops/waste_inputs.sql`); deciding whether the last build came from the same inputs, and
recording a new build's, is the same for every step: one row per step and partition in
`step_inputs`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime

import duckdb

from pipelines.warehouse.sql import read_sql

WHOLE = ""  # the partition key of a step built whole, not per partition


@dataclass(frozen=True)
class StepInputs:
    """What one build of a step's partition is computed from.

    Attributes:
        step: what the step builds, e.g. `cost_allocations`.
        partition_key: the partition built (a billing period's `YYYY-MM-01`), or WHOLE.
        inputs_digest: the digest of everything the build reads.
    """

    step: str
    partition_key: str
    inputs_digest: str

    def unchanged(self, conn: duckdb.DuckDBPyConnection) -> bool:
        """True when the partition's last recorded build came from the same inputs: what it built
        stands, and the step need not run."""
        recorded = conn.execute(
            read_sql("ops/step_inputs", "recorded"), {"step": self.step, "partition_key": self.partition_key}
        ).fetchone()
        return recorded is not None and recorded[0] == self.inputs_digest

    def record(self, conn: duckdb.DuckDBPyConnection) -> None:
        """Records these inputs as the partition's last build. Run it in the transaction that
        writes the build: a build rolled back leaves the previous record."""
        key = {"step": self.step, "partition_key": self.partition_key}
        conn.execute(read_sql("ops/step_inputs", "forget"), key)
        conn.execute(
            read_sql("ops/step_inputs", "record"),
            {
                "step": self.step,
                "partition_key": self.partition_key,
                "inputs_digest": self.inputs_digest,
                "recorded_at": datetime.now(UTC).replace(tzinfo=None),
            },
        )


def step_inputs(
    conn: duckdb.DuckDBPyConnection, step: str, partition_key: str, digest_sql: str, params: Mapping[str, object]
) -> StepInputs:
    """The inputs of a build of the step's partition now.

    Args:
        conn: a warehouse connection.
        step: what the step builds.
        partition_key: the partition, or WHOLE.
        digest_sql: the step's digest statement: one row, one column, the digest.
        params: its parameters.
    """
    (digest,) = conn.execute(digest_sql, dict(params)).fetchone()
    return StepInputs(step=step, partition_key=partition_key, inputs_digest=digest)
