"""Reads every `run_events` source and replaces the `run_events` table in one transaction."""

from decimal import Decimal

import duckdb
import pyarrow as pa

from connectors.training.event_files import RunEvent, read_event_files
from connectors.training.mlflow_runs import mlflow_run_events
from pipelines.config import RunLedgerConfig
from pipelines.sources.run_events.settings import RunEventsSource
from pipelines.warehouse.connection import transactions
from pipelines.warehouse.scale import at_column_scale
from pipelines.warehouse.sql import read_sql
from pipelines.warehouse.step_inputs import build_if_changed, rows_inputs

STAGED_EVENTS = "staged_run_events"
SECONDS = pa.decimal128(38, 10)
EVENTS_SCHEMA = pa.schema(
    [
        ("training_run", pa.string()),
        ("event_time", pa.timestamp("us")),
        ("event", pa.string()),
        ("step", pa.int64()),
        ("gpus", pa.int32()),
        ("config_hash", pa.string()),
        ("origin", pa.string()),
        ("tokens", pa.int64()),
        ("step_seconds", SECONDS),
        ("data_wait_seconds", SECONDS),
        ("duration_seconds", SECONDS),
    ]
)


def read_source_events(config: RunLedgerConfig, source: RunEventsSource) -> list[RunEvent]:
    """The events of one source: its JSON-lines file or folder, or its MLflow experiments.

    Raises:
        RunEventsError: a bad line (naming file and line) or an unreadable MLflow store.
    """
    if source.path is not None:
        return read_event_files(config.resolve(source.path))
    return mlflow_run_events(source.mlflow.tracking_uri, source.mlflow.experiment_names, source.mlflow.training_run_tag)


def replace_run_events(conn: duckdb.DuckDBPyConnection, events_by_source: dict[str, list[RunEvent]]) -> int:
    """Replaces every row of `run_events` with the given events, in one transaction.

    Args:
        conn: a writable warehouse connection (not inside a transaction).
        events_by_source: each configured source's events, all read before anything is replaced.

    Returns:
        The number of events written.
    """
    for attempt in transactions(conn):
        with attempt:
            _write_events(conn, events_by_source)
    return sum(len(events) for events in events_by_source.values())


def replace_run_events_if_changed(conn: duckdb.DuckDBPyConnection, events_by_source: dict[str, list[RunEvent]]) -> bool:
    """`replace_run_events` unless the table already holds the same events (step_inputs), so a
    night with the same events writes nothing.

    Returns:
        True when the table was replaced.
    """
    inputs = rows_inputs("run_events", events_by_source, ("inputs/run_events",))
    for attempt in transactions(conn):
        with attempt:
            replaced = build_if_changed(conn, inputs, lambda: _write_events(conn, events_by_source))
    return replaced


def _write_events(conn: duckdb.DuckDBPyConnection, events_by_source: dict[str, list[RunEvent]]) -> None:
    conn.execute(read_sql("inputs/run_events", "delete"))
    for source_name, events in events_by_source.items():
        staged = pa.Table.from_pylist(
            [
                {
                    "training_run": event.training_run,
                    "event_time": event.time,
                    "event": event.event,
                    "step": event.step,
                    "gpus": event.gpus,
                    "config_hash": event.config_hash,
                    "origin": event.origin,
                    "tokens": event.tokens,
                    "step_seconds": _ten_places(event.step_seconds),
                    "data_wait_seconds": _ten_places(event.data_wait_seconds),
                    "duration_seconds": _ten_places(event.duration_seconds),
                }
                for event in events
            ],
            schema=EVENTS_SCHEMA,
        )
        conn.register(STAGED_EVENTS, staged)
        try:
            conn.execute(read_sql("inputs/run_events", "insert"), {"source_name": source_name})
        finally:
            conn.unregister(STAGED_EVENTS)


def _ten_places(seconds: Decimal | None) -> Decimal | None:
    """Seconds at the column's scale, DECIMAL(38, 10) (the events keep them below 10^28)."""
    return None if seconds is None else at_column_scale(seconds)
