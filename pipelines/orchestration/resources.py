"""Dagster resources: the RunLedger configuration and its lake."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import dagster as dg
import duckdb

from pipelines.config import RunLedgerConfig, load_config
from pipelines.config_file import default_config_path
from pipelines.warehouse.connection import connect, connect_read_only
from pipelines.warehouse.locks import writer_lock
from pipelines.warehouse.owners import claim_lake

WAREHOUSE_POOL = "lake_writer"


class RunLedgerResource(dg.ConfigurableResource):
    """The `runledger.yaml` a run uses, and connections to the warehouse it names.

    `config_path` defaults to `$RUNLEDGER_CONFIG`, then `./runledger.yaml`, read when a run
    starts (never at import). `take_over_lake`: this configuration replaces the one that owns the
    lake (`claim_lake`).
    """

    config_path: str | None = None
    take_over_lake: bool = False

    def load_config(self) -> RunLedgerConfig:
        """Reads and validates the configuration."""
        return load_config(Path(self.config_path) if self.config_path else None)

    @contextmanager
    def warehouse(self, config: RunLedgerConfig) -> Iterator[duckdb.DuckDBPyConnection]:
        """A writable connection to the lake, closed afterwards, under the lake's writers' lock
        (`writer_lock`: a step waits while another process writes an embedded lake), once the
        lake is known to be this configuration's (`claim_lake`)."""
        with writer_lock(config.lake):
            conn = connect(config.lake)
            try:
                config_file = Path(self.config_path) if self.config_path else default_config_path()
                sources = [source.name for source in config.billing_sources]
                claim_lake(conn, config.lake, config_file, sources, take_over=self.take_over_lake)
                yield conn
            finally:
                conn.close()

    @contextmanager
    def reader(self, config: RunLedgerConfig) -> Iterator[duckdb.DuckDBPyConnection]:
        """A read-only connection to the lake (no lock: readers never wait for writers)."""
        conn = connect_read_only(config.lake)
        try:
            yield conn
        finally:
            conn.close()
