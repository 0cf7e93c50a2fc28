"""`runledger migrate`: a warehouse file of an earlier RunLedger (one DuckDB file) converted once
into the lake, in one commit; the file itself is left as it was."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import duckdb

from pipelines.warehouse.connection import connect, transaction
from pipelines.warehouse.lake import Lake, LakeError, sql_literal
from pipelines.warehouse.locks import writer_lock
from pipelines.warehouse.sql import read_sql
from pipelines.warehouse.summaries import SUMMARIES, build_summaries

LEGACY = "legacy"
# Rebuilt by the next run from what they digest (the first run after a migration recomputes the
# allocations and waste once), or written by the lake itself; the summary tables (views in earlier
# files) are rebuilt from the copied allocations in the migration's commit.
NOT_COPIED = {"step_inputs", "schema_version", "lake_owners", *SUMMARIES}
# The table every warehouse file of an earlier RunLedger holds.
REQUIRED_TABLE = "focus_line_items"


@dataclass(frozen=True)
class Migration:
    """What a migration copied.

    Attributes:
        source: the warehouse file read.
        lake: the lake written.
        rows: rows copied per table.
    """

    source: Path
    lake: Lake
    rows: dict[str, int]


def migrate(lake: Lake) -> Migration:
    """Copies every table of `lake.legacy_file` into `lake.migration_target` and rebuilds the
    summary tables from them, in one commit, holding the writers' lock.

    Args:
        lake: the configured lake, whose `legacy_file` is the file to convert.

    Raises:
        LakeError: there is no file to convert, or the target lake already holds line items.
    """
    source = lake.legacy_file
    if source is None:
        raise LakeError(f"nothing to migrate: {lake.describe()} holds no warehouse file of an earlier version")
    _require_runledger_file(source)
    target = lake.migration_target
    with writer_lock(target):
        return Migration(source=source, lake=target, rows=_copy(source, target))


def _require_runledger_file(source: Path) -> None:
    """Refuses, before the lake is touched, a DuckDB file that is not a warehouse of an earlier
    RunLedger: one without the line items every RunLedger warehouse holds."""
    try:
        conn = duckdb.connect(str(source), read_only=True)
    except duckdb.Error as error:
        raise LakeError(f"{source}: cannot be read as a DuckDB file: {' '.join(str(error).split())}") from None
    try:
        tables = {name for (name,) in conn.execute(read_sql("ops/migrate", "main_tables")).fetchall()}
    finally:
        conn.close()
    if REQUIRED_TABLE not in tables:
        found = ", ".join(sorted(tables)[:5]) + (", …" if len(tables) > 5 else "") if tables else "none"
        raise LakeError(
            f"{source} is not a warehouse file of an earlier RunLedger: it has no {REQUIRED_TABLE} table "
            f"(its tables: {found}); nothing was converted: point `warehouse:` at RunLedger's lake folder"
        )


def _copy(source: Path, target: Lake) -> dict[str, int]:
    conn = connect(target)
    try:
        (existing,) = conn.execute(read_sql("ops/migrate", "line_items")).fetchone()
        if existing:
            raise LakeError(
                f"{target.describe()} already holds {existing:,} line items; migrate into an empty lake "
                "(the file may have been converted already)"
            )
        conn.execute(f"attach {sql_literal(str(source))} as {LEGACY} (read_only)")
        tables = dict(conn.execute(read_sql("ops/migrate", "common_columns")).fetchall())
        rows = {}
        with transaction(conn):
            for table, columns in sorted(tables.items()):
                if table in NOT_COPIED:
                    continue
                names = ", ".join(f'"{column}"' for column in columns)
                (rows[table],) = conn.execute(
                    f'insert into "{table}" ({names}) select {names} from {LEGACY}."{table}"'
                ).fetchone()
            build_summaries(conn)
        conn.execute(f"detach {LEGACY}")
    except duckdb.Error as error:
        raise LakeError(f"{source}: cannot be converted: {error}") from None
    finally:
        conn.close()
    return rows
