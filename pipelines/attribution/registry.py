"""The run registry (`attribution.runs`): validation and its warehouse table."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

import duckdb
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from pipelines.config import format_validation_error
from pipelines.config_rules import ConfigError, Weight, read_yaml, repeated
from pipelines.warehouse.sql import read_sql
from pipelines.warehouse.step_inputs import build_if_changed, rows_inputs


class RegisteredRun(BaseModel):
    """One training run of the registry."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(min_length=1)
    experiment: str | None = None
    dataset_version: str | None = None
    owner: str | None = None
    start: datetime | None = None
    end: datetime | None = None
    resources: list[str] = Field(default_factory=list)
    weight: Weight = Decimal(1)

    @model_validator(mode="after")
    def _window_in_order(self) -> RegisteredRun:
        if self.start and self.end and self.end <= self.start:
            raise ValueError("end must be after start (the window is [start, end))")
        return self


class RunRegistry(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    runs: list[RegisteredRun] = Field(default_factory=list)


def _utc_naive(moment: datetime | None) -> datetime | None:
    if moment is None or moment.tzinfo is None:
        return moment
    return moment.astimezone(UTC).replace(tzinfo=None)


def load_registry(path: Path) -> list[RegisteredRun]:
    """Reads and validates a runs file.

    Raises:
        ConfigError: naming the file and key (malformed YAML, unknown keys, duplicate ids…).
    """
    document = read_yaml(path)
    try:
        registry = RunRegistry.model_validate(document or {})
    except ValidationError as error:
        raise ConfigError(format_validation_error(path, error, document)) from None
    repeated_ids = repeated([run.id for run in registry.runs])
    if repeated_ids:
        raise ConfigError(f"{path}: runs: run ids must be unique, repeated: {', '.join(repeated_ids)}")
    return registry.runs


def replace_run_registry_if_changed(conn: duckdb.DuckDBPyConnection, runs: list[RegisteredRun]) -> bool:
    """Replaces the `run_registry` table unless it already holds these runs (step_inputs), so a
    night with the same runs file writes nothing; the caller owns the transaction.

    Returns:
        True when the table was replaced.
    """
    inputs = rows_inputs("run_registry", runs, ("inputs/run_registry",))
    return build_if_changed(conn, inputs, lambda: replace_run_registry(conn, runs))


def replace_run_registry(conn: duckdb.DuckDBPyConnection, runs: list[RegisteredRun]) -> int:
    """Replaces the `run_registry` table; the caller owns the transaction."""
    conn.execute(read_sql("inputs/run_registry", "delete"))
    for run in runs:
        conn.execute(
            read_sql("inputs/run_registry", "insert"),
            {
                "training_run": run.id,
                "experiment": run.experiment,
                "dataset_version": run.dataset_version,
                "owner": run.owner,
                "window_start": _utc_naive(run.start),
                "window_end": _utc_naive(run.end),
                "resources": run.resources,
                "weight": run.weight,
            },
        )
    return len(runs)
