"""The lake's upkeep: old snapshots expired, small files merged, files no snapshot needs deleted,
files the catalog does not know deleted."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import duckdb

from pipelines.warehouse.sql import read_sql

# A data file the catalog does not know is deleted once it is this old: a younger one may be a
# writer's that has not committed yet.
ORPHAN_MIN_AGE = timedelta(days=1)


@dataclass(frozen=True)
class Upkeep:
    """What one upkeep did.

    Attributes:
        expired_snapshots: snapshots older than the retention, now gone (time travel reaches back
            to the oldest kept one).
        deleted_files: data files no kept snapshot reads, deleted.
        orphaned_files: data files the catalog does not know (left by a writer killed before
            its commit), deleted.
        snapshots: snapshots kept.
        data_files: the data files the current snapshot reads.
        delete_files: the delete files it reads (rows deleted inside a data file).
    """

    expired_snapshots: int
    deleted_files: int
    orphaned_files: int
    snapshots: int
    data_files: int
    delete_files: int


def maintain_lake(conn: duckdb.DuckDBPyConnection, retention_days: int) -> Upkeep:
    """Expires the snapshots older than `retention_days`, merges adjacent small data files,
    deletes the files only expired snapshots read, and the files older than `ORPHAN_MIN_AGE` the
    catalog does not know.

    Args:
        conn: a writable connection to the lake (from `connect`).
        retention_days: how far back `--at` must still reach.
    """
    cutoff = {"older_than": datetime.now(UTC) - timedelta(days=retention_days)}
    expired = conn.execute(read_sql("ops/maintenance", "expire_snapshots"), cutoff).fetchall()
    conn.execute(read_sql("ops/maintenance", "merge_adjacent_files"))
    deleted = conn.execute(read_sql("ops/maintenance", "cleanup_old_files"), cutoff).fetchall()
    orphans = conn.execute(
        read_sql("ops/maintenance", "delete_orphaned_files"), {"older_than": datetime.now(UTC) - ORPHAN_MIN_AGE}
    ).fetchall()
    snapshots, data_files, delete_files = conn.execute(read_sql("ops/maintenance", "state")).fetchone()
    return Upkeep(len(expired), len(deleted), len(orphans), snapshots, data_files, delete_files)
