"""Reads every scheduler source and replaces `cluster_intervals`, `cluster_nodes` and
`cluster_node_tags` in one transaction (the public view over them is `cluster_usage`)."""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal

import duckdb
import pyarrow as pa

from pipelines.config import RunLedgerConfig
from pipelines.sources.intervals import ClusterIntervals
from pipelines.sources.registry import kind_of
from pipelines.warehouse.connection import transactions
from pipelines.warehouse.dimension_keys import load_dimension_keys
from pipelines.warehouse.scale import at_column_scale
from pipelines.warehouse.sql import read_sql
from pipelines.warehouse.step_inputs import build_if_changed, rows_inputs

STAGED_INTERVALS = "staged_intervals"
STAGED_NODES = "staged_nodes"
MONEY_SCALE = pa.decimal128(38, 10)
INTERVALS_SCHEMA = pa.schema(
    [
        ("interval_index", pa.int64()),
        ("cluster", pa.string()),
        ("node", pa.string()),
        ("resource_id", pa.string()),
        ("job_id", pa.string()),
        ("labels", pa.map_(pa.string(), pa.string())),
        ("interval_start", pa.timestamp("us")),
        ("interval_end", pa.timestamp("us")),
        ("gpus", MONEY_SCALE),
        ("cpus", MONEY_SCALE),
    ]
)
NODES_SCHEMA = pa.schema(
    [
        ("cluster", pa.string()),
        ("node", pa.string()),
        ("resource_id", pa.string()),
        ("valid_from", pa.timestamp("us")),
        ("valid_to", pa.timestamp("us")),
        ("gpus", MONEY_SCALE),
        ("cpus", MONEY_SCALE),
    ]
)


def read_scheduler_sources(config: RunLedgerConfig) -> dict[str, ClusterIntervals]:
    """Every `slurm` and `kubernetes` source's intervals and nodes, all read before anything is
    replaced.

    Raises:
        SourceError: a source could not be read (the message names its file, job or series).
    """
    return {source.name: kind_of(source).intervals(source, config.resolve) for source in config.scheduler_sources}


def replace_cluster_usage_if_changed(
    conn: duckdb.DuckDBPyConnection, by_source: Mapping[str, ClusterIntervals], dimensions: Mapping[str, list[str]]
) -> bool:
    """Replaces the scheduler tables with what the sources read, in one transaction, unless they
    already hold the same rows read under the same dimensions (step_inputs).

    Args:
        conn: a writable warehouse connection (not inside a transaction).
        by_source: each scheduler source's intervals, nodes and node tag.
        dimensions: `attribution.dimensions`, which the jobs' labels are matched to.

    Returns:
        True when the tables were replaced.
    """
    inputs = rows_inputs(
        "cluster_usage", (sorted(dimensions.items()), sorted(by_source.items())), ("inputs/cluster_intervals",)
    )
    for attempt in transactions(conn):
        with attempt:
            replaced = build_if_changed(conn, inputs, lambda: _write(conn, by_source, dimensions))
    return replaced


def _write(
    conn: duckdb.DuckDBPyConnection, by_source: Mapping[str, ClusterIntervals], dimensions: Mapping[str, list[str]]
) -> None:
    load_dimension_keys(conn, dimensions)
    conn.execute(read_sql("inputs/cluster_intervals", "delete"))
    for source_name, read in by_source.items():
        params = {"source_name": source_name}
        conn.register(STAGED_INTERVALS, _intervals_table(read))
        conn.register(STAGED_NODES, _nodes_table(read))
        try:
            conn.execute(read_sql("inputs/cluster_intervals", "insert_intervals"), params)
            conn.execute(read_sql("inputs/cluster_intervals", "insert_nodes"), params)
        finally:
            conn.unregister(STAGED_INTERVALS)
            conn.unregister(STAGED_NODES)
        if read.node_tag is not None:
            clusters = {interval.cluster for interval in read.intervals} | {node.cluster for node in read.nodes}
            for cluster in sorted(clusters):
                conn.execute(
                    read_sql("inputs/cluster_intervals", "insert_node_tag"),
                    params | {"cluster": cluster, "tag_key": read.node_tag},
                )


def _intervals_table(read: ClusterIntervals) -> pa.Table:
    return pa.Table.from_pylist(
        [
            {
                "interval_index": index,
                "cluster": interval.cluster,
                "node": interval.node,
                "resource_id": interval.resource_id,
                "job_id": interval.job_id,
                "labels": list(interval.labels.items()),
                "interval_start": interval.start,
                "interval_end": interval.end,
                "gpus": _ten_places(interval.gpus),
                "cpus": _ten_places(interval.cpus),
            }
            for index, interval in enumerate(read.intervals)
        ],
        schema=INTERVALS_SCHEMA,
    )


def _nodes_table(read: ClusterIntervals) -> pa.Table:
    return pa.Table.from_pylist(
        [
            {
                "cluster": node.cluster,
                "node": node.node,
                "resource_id": node.resource_id,
                "valid_from": node.valid_from,
                "valid_to": node.valid_to,
                "gpus": _ten_places(node.gpus),
                "cpus": _ten_places(node.cpus),
            }
            for node in read.nodes
        ],
        schema=NODES_SCHEMA,
    )


def _ten_places(value: Decimal | None) -> Decimal | None:
    """GPUs and CPUs at DECIMAL(38, 10)'s scale: a job's 7 GPUs over 3 nodes is 2.3333333333 on each."""
    return None if value is None else at_column_scale(value)
