"""The lake's upkeep: old snapshots expired, small files merged, files no snapshot needs deleted."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import duckdb

from pipelines.warehouse.sql import read_sql


@dataclass(frozen=True)
class Upkeep:
    """What one upkeep did.

    Attributes:
        expired_snapshots: snapshots older than the retention, now gone (time travel reaches back
            to the oldest kept one).
        deleted_files: data files no kept snapshot reads, deleted.
        snapshots: snapshots kept.
        data_files: the data files the current snapshot reads.
        delete_files: the delete files it reads (rows deleted inside a data file).
    """

    expired_snapshots: int
    deleted_files: int
    snapshots: int
    data_files: int
    delete_files: int


def maintain_lake(conn: duckdb.DuckDBPyConnection, retention_days: int) -> Upkeep:
    """Expires the snapshots older than `retention_days`, merges adjacent small data files, and
    deletes the files only expired snapshots read.

    Args:
        conn: a writable connection to the lake (from `connect`).
        retention_days: how far back `--at` must still reach.
    """
    cutoff = {"older_than": datetime.now(UTC) - timedelta(days=retention_days)}
    expired = conn.execute(read_sql("ops/maintenance", "expire_snapshots"), cutoff).fetchall()
    conn.execute(read_sql("ops/maintenance", "merge_adjacent_files"))
    deleted = conn.execute(read_sql("ops/maintenance", "cleanup_old_files"), cutoff).fetchall()
    snapshots, data_files, delete_files = conn.execute(read_sql("ops/maintenance", "state")).fetchone()
    return Upkeep(len(expired), len(deleted), snapshots, data_files, delete_files)
