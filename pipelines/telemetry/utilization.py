"""Reads every telemetry source and replaces `gpu_utilization` in one transaction (the view
`gpu_utilization_runs` and the mart `run_utilization` read it)."""

from __future__ import annotations

from collections.abc import Mapping

import duckdb
import pyarrow as pa

from pipelines.config import RunLedgerConfig
from pipelines.sources.registry import kind_of
from pipelines.sources.telemetry import GpuHour, GpuSample, hourly
from pipelines.warehouse.connection import transactions
from pipelines.warehouse.scale import at_column_scale
from pipelines.warehouse.sql import read_sql
from pipelines.warehouse.step_inputs import build_if_changed, rows_inputs

STAGED_GPU_HOURS = "staged_gpu_hours"
GPU_HOURS_SCHEMA = pa.schema(
    [
        ("series", pa.string()),
        ("gpu", pa.string()),
        ("hour", pa.timestamp("us")),
        ("samples", pa.int32()),
        ("utilization_sum", pa.decimal128(38, 10)),
        ("host", pa.string()),
        ("resource_id", pa.string()),
        ("job_id", pa.string()),
        ("training_run", pa.string()),
    ]
)


def read_telemetry_sources(config: RunLedgerConfig) -> dict[str, list[GpuHour]]:
    """Every `prometheus` source's GPU-hours, and the system metrics of every `run_events` source
    on MLflow, all read before anything is replaced.

    Raises:
        SourceError: a Prometheus source could not be read (naming its URL or file, the series).
        RunEventsError: an MLflow store could not be read, or a bad value (naming the run).
    """
    by_source = {source.name: kind_of(source).telemetry(source, config.resolve) for source in config.telemetry_sources}
    for source in config.run_events_sources:
        if source.mlflow is not None:
            from connectors.training.mlflow_runs import mlflow_gpu_utilization

            samples = mlflow_gpu_utilization(
                source.mlflow.tracking_uri, source.mlflow.experiment_names, source.mlflow.training_run_tag
            )
            by_source[source.name] = hourly(
                GpuSample(
                    series=sample.origin.rsplit(" step ", 1)[0],
                    gpu=f"{sample.training_run}/{sample.gpu}",
                    time=sample.time,
                    utilization=sample.utilization,
                    training_run=sample.training_run,
                )
                for sample in samples
            )
    return by_source


def replace_gpu_utilization_if_changed(conn: duckdb.DuckDBPyConnection, by_source: Mapping[str, list[GpuHour]]) -> bool:
    """Replaces `gpu_utilization` with what the sources read, in one transaction, unless it already
    holds the same rows (step_inputs).

    Args:
        conn: a writable warehouse connection (not inside a transaction).
        by_source: each telemetry source's GPU-hours.

    Returns:
        True when the table was replaced.
    """
    inputs = rows_inputs("gpu_utilization", sorted(by_source.items()), ("inputs/gpu_utilization",))
    for attempt in transactions(conn):
        with attempt:
            replaced = build_if_changed(conn, inputs, lambda: _write(conn, by_source))
    return replaced


def _write(conn: duckdb.DuckDBPyConnection, by_source: Mapping[str, list[GpuHour]]) -> None:
    conn.execute(read_sql("inputs/gpu_utilization", "delete"))
    for source_name, gpu_hours in by_source.items():
        staged = pa.Table.from_pylist(
            [
                {
                    "series": gpu_hour.series,
                    "gpu": gpu_hour.gpu,
                    "hour": gpu_hour.hour,
                    "samples": gpu_hour.samples,
                    "utilization_sum": at_column_scale(gpu_hour.utilization_sum),
                    "host": gpu_hour.host,
                    "resource_id": gpu_hour.resource_id,
                    "job_id": gpu_hour.job_id,
                    "training_run": gpu_hour.training_run,
                }
                for gpu_hour in gpu_hours
            ],
            schema=GPU_HOURS_SCHEMA,
        )
        conn.register(STAGED_GPU_HOURS, staged)
        try:
            conn.execute(read_sql("inputs/gpu_utilization", "insert"), {"source_name": source_name})
        finally:
            conn.unregister(STAGED_GPU_HOURS)
