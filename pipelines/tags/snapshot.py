"""A dated snapshot of resource tags written to `resource_tag_snapshots`, all of it or nothing.

The resources are streamed to a staging Parquet file as the API pages arrive (a failure on any
page or region leaves the table untouched), then appended in one statement.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Iterator
from datetime import datetime
from itertools import islice
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from connectors.aws.tagging import TaggedResource
from pipelines.warehouse.sql import read_sql

STAGING_BATCH_ROWS = 10_000
STAGED_SCHEMA = pa.schema(
    [
        ("region", pa.string()),
        ("resource_arn", pa.string()),
        ("tags", pa.list_(pa.struct([("key", pa.string()), ("value", pa.string())]))),
    ]
)


def _batches(resources: Iterable[TaggedResource]) -> Iterator[list[TaggedResource]]:
    iterator = iter(resources)
    while batch := list(islice(iterator, STAGING_BATCH_ROWS)):
        yield batch


def append_snapshot(
    conn: duckdb.DuckDBPyConnection,
    source_name: str,
    resources: Iterable[TaggedResource],
    snapshot_at: datetime,
    staging_dir: Path,
) -> int:
    """Appends one snapshot of `source_name` taken at `snapshot_at` (UTC); returns its row count.

    Args:
        conn: a writable warehouse connection.
        source_name: the configured `aws_tags` source.
        resources: the resources, each ARN once, as the Tagging API returned them.
        snapshot_at: when the snapshot was taken, naive UTC; shared by every row.
        staging_dir: where the staging Parquet file is written (removed afterwards).
    """
    staging_dir.mkdir(parents=True, exist_ok=True)
    staging_file = staging_dir / f"tags-{source_name}-{uuid.uuid4().hex}.parquet"
    rows = 0
    try:
        with pq.ParquetWriter(staging_file, STAGED_SCHEMA) as writer:
            for batch in _batches(resources):
                writer.write_table(
                    pa.Table.from_pylist(
                        [
                            {
                                "region": r.region,
                                "resource_arn": r.resource_arn,
                                "tags": [{"key": k, "value": v} for k, v in r.tags.items()],
                            }
                            for r in batch
                        ],
                        schema=STAGED_SCHEMA,
                    )
                )
                rows += len(batch)
        conn.execute(
            read_sql("inputs/resource_tag_snapshots"),
            {"staging_file": str(staging_file), "source_name": source_name, "snapshot_at": snapshot_at},
        )
    finally:
        staging_file.unlink(missing_ok=True)
    return rows
