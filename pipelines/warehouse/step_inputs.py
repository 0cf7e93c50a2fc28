"""Inputs digests: a step whose inputs did not change since its last build keeps what it built.

Each step computes the digest of what it reads: with its own statement (`sql/ops/allocation_inputs.sql`,
`sql/ops/waste_inputs.sql`), from the lake's file lists of the tables it reads (`tables_inputs`: a
mart's, from the inputs it declares, `pipelines.orchestration.marts`), or from the rows it would
write (`rows_inputs`); deciding whether the last build came from the
same inputs, and recording a new build's, is the same for every step: one row per step and
partition in `step_inputs`. A check that builds nothing (reconciliation, untagged_share) records
what it concluded beside its inputs (`concluded_if_changed`), and a night with the same inputs
shows that conclusion again without running it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

import duckdb

from pipelines.warehouse.sql import SQL_DIR, read_sql

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

    def recorded_outcome(self, conn: duckdb.DuckDBPyConnection) -> str | None:
        """What the step concluded last time (`record`'s outcome) when that came from the same
        inputs; else None."""
        recorded = conn.execute(
            read_sql("ops/step_inputs", "outcome"),
            {"step": self.step, "partition_key": self.partition_key, "inputs_digest": self.inputs_digest},
        ).fetchone()
        return None if recorded is None else recorded[0]

    def record(self, conn: duckdb.DuckDBPyConnection, outcome: str | None = None) -> None:
        """Records these inputs as the partition's last build. Run it in the transaction that
        writes the build: a build rolled back leaves the previous record.

        Args:
            conn: a writable connection to the lake.
            outcome: what a check concluded from these inputs (text), shown again while they are
                unchanged; None for a build.
        """
        key = {"step": self.step, "partition_key": self.partition_key}
        conn.execute(read_sql("ops/step_inputs", "forget"), key)
        conn.execute(
            read_sql("ops/step_inputs", "record"),
            {
                "step": self.step,
                "partition_key": self.partition_key,
                "inputs_digest": self.inputs_digest,
                "recorded_at": datetime.now(UTC).replace(tzinfo=None),
                "outcome": outcome,
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


def _sql_files_digest(sql_files: Sequence[str]) -> dict[str, str]:
    return {path: hashlib.sha256((SQL_DIR / f"{path}.sql").read_bytes()).hexdigest() for path in sql_files}


def tables_inputs(
    conn: duckdb.DuckDBPyConnection,
    step: str,
    tables: Sequence[str],
    sql_files: Sequence[str],
    settings: Mapping[str, object] | None = None,
) -> StepInputs:
    """The inputs of a step built whole from lake tables: the data and delete files each table
    consists of now, the text of the SQL files the build runs, and its settings.

    No table's rows are read, so the digest costs the same at any size. It is exact: DuckLake
    never changes a file it wrote (an insert adds files, a delete adds a delete file or drops a
    data file), and RunLedger's lake keeps no rows in the catalog (`lake.attach`: no inlining), so
    a table with the same files holds the same rows. A file merge changes the list without
    changing the rows: the next run builds again, once. Call it in the build's transaction,
    before the build: it sees the snapshot the build reads.

    Args:
        conn: a writable connection to the lake, inside the build's transaction.
        step: what the step builds.
        tables: every table the build reads (tables, not views: a view has no files; name the
            tables it reads instead), not those it writes.
        sql_files: the `sql/` files (without `.sql`) whose statements the build runs.
        settings: the build's parameters that are not in the tables (JSON-serializable).
    """
    files = {
        table: conn.execute(read_sql("ops/step_inputs", "table_files"), {"table_name": table}).fetchone()[0]
        for table in tables
    }
    parts = {"tables": files, "sql": _sql_files_digest(sql_files), "settings": settings or {}}
    digest = hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()
    return StepInputs(step=step, partition_key=WHOLE, inputs_digest=digest)


def rows_inputs(step: str, rows: object, sql_files: Sequence[str]) -> StepInputs:
    """The inputs of a step that replaces a table whole with rows read from outside the lake
    (files, an API): the rows themselves (their `repr`, which is exact for the values rows hold:
    text, numbers, Decimals, dates, lists and dicts) and the SQL files that write them. Equal
    digests mean the table already holds these rows, so the step need not write it (and the
    tables' file lists its readers' digests come from stay the same)."""
    text = repr((rows, _sql_files_digest(sql_files)))
    return StepInputs(step=step, partition_key=WHOLE, inputs_digest=hashlib.sha256(text.encode()).hexdigest())


def step_builds(conn: duckdb.DuckDBPyConnection, step: str) -> dict[str, str]:
    """When each partition of a step was last built (`recorded_at` as text, by partition key):
    part of the inputs of a check that reads them, as the reconciliation reads the allocations'."""
    return {
        partition_key: str(recorded_at)
        for partition_key, recorded_at in conn.execute(read_sql("ops/step_inputs", "builds"), {"step": step}).fetchall()
    }


def concluded_if_changed(
    conn: duckdb.DuckDBPyConnection,
    inputs: StepInputs,
    conclude: Callable[[], tuple[str, bool]],
) -> tuple[str, bool]:
    """What a check concludes from its inputs: what it concluded last time when they are the
    same, else what it concludes now, recorded when it is worth keeping.

    Args:
        conn: a writable connection to the lake, inside a transaction (the inputs digest and the
            check then see one snapshot).
        inputs: the check's inputs now (`tables_inputs` of the tables it reads).
        conclude: runs the check: its outcome (text) and whether to record it (a failed
            reconciliation is not: it runs again whatever its inputs).

    Returns:
        The outcome, and True when the check ran.
    """
    recorded = inputs.recorded_outcome(conn)
    if recorded is not None:
        return recorded, False
    outcome, keep = conclude()
    if keep:
        inputs.record(conn, outcome)
    return outcome, True


def build_if_changed(conn: duckdb.DuckDBPyConnection, inputs: StepInputs, build: Callable[[], object]) -> bool:
    """Runs the build unless the step's last build came from the same inputs, and records them.

    Args:
        conn: a writable connection to the lake, inside the build's transaction.
        inputs: the inputs of the build now.
        build: writes the step's tables.

    Returns:
        True when the build ran.
    """
    if inputs.unchanged(conn):
        return False
    build()
    inputs.record(conn)
    return True
