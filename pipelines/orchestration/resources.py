"""Dagster resources: the RunLedger configuration and its DuckDB warehouse."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import dagster as dg
import duckdb

from pipelines.config import RunLedgerConfig, load_config
from pipelines.warehouse.connection import connect
from pipelines.warehouse.locks import run_lock

WAREHOUSE_POOL = "duckdb_writer"


class RunLedgerResource(dg.ConfigurableResource):
    """The `runledger.yaml` a run uses, and connections to the warehouse it names.

    `config_path` defaults to `$RUNLEDGER_CONFIG`, then `./runledger.yaml`, read when a run
    starts (never at import).
    """

    config_path: str | None = None

    def load_config(self) -> RunLedgerConfig:
        """Reads and validates the configuration."""
        return load_config(Path(self.config_path) if self.config_path else None)

    @contextmanager
    def warehouse(self, config: RunLedgerConfig) -> Iterator[duckdb.DuckDBPyConnection]:
        """A writable connection to the warehouse, closed afterwards, under the warehouse's run lock
        (so a step launched by Dagster never writes while `runledger run` runs, and the reverse).

        Raises:
            RunInProgress: another process holds the lock.
        """
        with run_lock(config.warehouse_path):
            conn = connect(config.warehouse_path)
            try:
                yield conn
            finally:
                conn.close()
