"""Which configuration owns a lake: the first `runledger.yaml` to write it is recorded in
`lake_owners`, with each billing source it loads, and a writer of another configuration is refused.

Two configurations writing one lake replace each other silently: a source of the same name is
reloaded from the other's files, and the run registry and budgets are the last writer's. A writer
may take the lake over on purpose (a moved project, a configuration replacing another).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

import duckdb

from pipelines.warehouse.connection import transactions
from pipelines.warehouse.lake import Lake, LakeError
from pipelines.warehouse.sql import read_sql

TAKE_OVER = "--take-over-lake"


def configuration_of(config_file: Path, lake: Lake) -> str:
    """How `lake_owners` names a configuration: for an embedded lake the file's path relative to
    the lake's folder (so a project moved or copied with its lake keeps it), else its absolute path."""
    if lake.sqlite_file is not None:
        return os.path.relpath(config_file.resolve(), lake.sqlite_file.parent.resolve())
    return str(config_file.resolve())


def _shown(configuration: str, lake: Lake) -> Path:
    if lake.sqlite_file is not None:
        return Path(os.path.normpath(lake.sqlite_file.parent.resolve() / configuration))
    return Path(configuration)


def claim_lake(
    conn: duckdb.DuckDBPyConnection, lake: Lake, config_file: Path, sources: Sequence[str], *, take_over: bool
) -> None:
    """Records `config_file` as the owner of the lake and of `sources` where nothing is recorded
    yet, or refuses a lake another configuration owns.

    Args:
        conn: a writer's connection to the lake.
        lake: the lake, as messages name it.
        config_file: the writer's runledger.yaml.
        sources: its billing sources' names.
        take_over: replace the recorded owners with this configuration.

    Raises:
        LakeError: another configuration owns the lake (exit 2), naming it and what to do.
    """
    configuration = configuration_of(config_file, lake)
    for attempt in transactions(conn):
        with attempt:
            owners = conn.execute(read_sql("ops/lake_owners", "owners")).fetchall()
            lake_owner = next(((owner, since) for source, owner, since in owners if source is None), None)
            if take_over and lake_owner is not None and lake_owner[0] != configuration:
                conn.execute(read_sql("ops/lake_owners", "forget"))
                owners, lake_owner = [], None
            if lake_owner is not None and lake_owner[0] != configuration:
                owner, since = lake_owner
                raise LakeError(
                    f"{lake.describe()} belongs to the configuration {_shown(owner, lake)} "
                    f"(since {since:%Y-%m-%d %H:%M} UTC), not {config_file.resolve()}: two configurations writing "
                    "one lake replace each other's sources, run registry and budgets. Give this configuration a "
                    f"lake of its own (`warehouse:`), or, if it replaces that one (a moved project), run "
                    f"`runledger run {TAKE_OVER}` once"
                )
            claimed = {source for source, _, _ in owners}
            now = datetime.now(UTC).replace(tzinfo=None)
            for source in [None, *sources]:
                if source not in claimed:
                    conn.execute(
                        read_sql("ops/lake_owners", "claim"),
                        {"source_name": source, "configuration": configuration, "claimed_at": now},
                    )
