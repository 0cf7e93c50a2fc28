"""The lake's data files checked against its catalog, and a lake whose files were lost or damaged
by hand repaired: what the nightly run computes is rebuilt, a lost period of line items is
reloaded from its export, and RunLedger's own records — which no export holds — are kept.

DuckLake names every file a table reads in its catalog, with its size. A file deleted, truncated
or replaced by hand makes every statement that reads it fail (`Cannot open file`, `No magic
bytes found at end of file`), and DuckLake must read a file to delete its rows, so the nightly
run alone cannot replace them: a table whose file is lost is dropped and created again instead
(a change of the catalog only), keeping what is still readable.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date

import duckdb

from pipelines.warehouse.connection import create_schema_statements, describe_commit, transactions
from pipelines.warehouse.lake import Lake
from pipelines.warehouse.sql import read_sql

# RunLedger's own records, which no export or input file holds: a lost file of theirs is restored
# from a backup, never rebuilt.
RECORDS = ("alert_deliveries", "load_snapshots", "loads", "resource_tag_snapshots")
# Line items, per (source, billing period), reloaded from the exports.
LINE_ITEMS = "focus_line_items"
# What the nightly run rebuilds whole when its record of what it built is gone.
STEP_RECORD = "step_inputs"
REPAIR_HINT = "run `runledger repair` (docs/operations.md#a-lost-or-damaged-lake-file)"
# A lake data file as a DuckDB error names it: `<data path><schema>/<table>/[<key>=<value>/…]ducklake-….parquet`.
LAKE_FILE = re.compile(
    r"""["'](?P<path>[^"']*/(?P<table>\w+)/(?P<partition>(?:[^/"']+=[^/"']*/)*)ducklake-[^/"']+\.parquet)["']"""
)


@dataclass(frozen=True)
class DamagedFile:
    """A file the lake's current snapshot reads that is not as its catalog recorded it.

    Attributes:
        table: the table that reads it.
        kind: `data`, or `delete` for a file of rows deleted from a data file.
        path: where the catalog says it is.
        partition: its partition's values (`x_SourceName`, `year`, `month`), empty for a table
            without partitions.
        problem: `missing`, or what is wrong with its size.
    """

    table: str
    kind: str
    path: str
    partition: dict[str, str]
    problem: str

    @property
    def where(self) -> str:
        """The table, with its source and billing period when it is partitioned by them."""
        return _where(self.table, self.partition)

    @property
    def source_period(self) -> tuple[str, date] | None:
        """The (source, billing period) of a file of line items."""
        return _source_period(self.partition) if self.table == LINE_ITEMS else None

    def describe(self) -> str:
        return f"{self.where}: {self.kind} file {self.path} is {self.problem}"


class DamagedLake(RuntimeError):
    """The lake's data files are not all as its catalog recorded them; the message names each
    file with its table and period, and the repair."""


def _partition(path: str | None) -> dict[str, str]:
    if not path:
        return {}
    return dict(part.split("=", 1) for part in path.split("/")[:-1] if "=" in part)


def _source_period(partition: dict[str, str]) -> tuple[str, date]:
    return partition["x_SourceName"], date(int(partition["year"]), int(partition["month"]), 1)


def _where(table: str, partition: dict[str, str]) -> str:
    parts = []
    if "x_SourceName" in partition:
        parts.append(f"source {partition['x_SourceName']}")
    if "year" in partition and "month" in partition:
        parts.append(f"billing period {int(partition['year']):04d}-{int(partition['month']):02d}")
    return f"{table} ({', '.join(parts)})" if parts else table


def damaged_files(conn: duckdb.DuckDBPyConnection, lake: Lake) -> list[DamagedFile]:
    """The files the current snapshot reads that are missing or whose size is not the one the
    catalog recorded (a truncated or replaced file); no file's content is read."""
    try:
        present = dict(
            conn.execute(read_sql("ops/repair", "present"), {"pattern": f"{lake.data_path}**/*.parquet"}).fetchall()
        )
    except duckdb.IOException as error:
        if "No files found" not in str(error):
            raise  # the data path cannot be listed: no file can be judged
        present = {}
    damaged = []
    for table, kind, path, partition_path, size in conn.execute(
        read_sql("ops/repair", "files"), {"data_path": lake.data_path}
    ).fetchall():
        found = present.get(path)
        if found == size:
            continue
        problem = "missing" if found is None else f"{found:,} bytes where the catalog recorded {size:,}"
        damaged.append(DamagedFile(table, kind, path, _partition(partition_path), problem))
    return damaged


def damage_message(damaged: Iterable[DamagedFile]) -> str:
    """What `run` and `report` say of a damaged lake."""
    return (
        "the lake's data files are not as its catalog recorded them (deleted, truncated or replaced by hand): "
        + "; ".join(file.describe() for file in damaged)
        + f"; {REPAIR_HINT}"
    )


def require_whole(conn: duckdb.DuckDBPyConnection, lake: Lake) -> None:
    """Raises DamagedLake, naming each damaged file's table and period, unless every file the lake
    reads is as its catalog recorded it."""
    damaged = damaged_files(conn, lake)
    if damaged:
        raise DamagedLake(damage_message(damaged))


def explain_file_error(error: BaseException) -> str | None:
    """A DuckDB error reading a lake data file, with the file's table and period and the repair
    (None for any other error)."""
    text = " ".join(str(error).split())
    match = LAKE_FILE.search(text)
    if not isinstance(error, duckdb.IOException | duckdb.InvalidInputException) or match is None:
        return None
    where = _where(match["table"], _partition(match["partition"] + "file"))
    return f"{where}: the lake's data file {match['path']} is missing or damaged ({text}); {REPAIR_HINT}"


@dataclass(frozen=True)
class Repair:
    """What `repair_lake` did.

    Attributes:
        damaged: the files found missing or damaged.
        rebuilt: the tables dropped and created empty, for the nightly run to rebuild.
        reload: the (source, billing period)s of line items dropped, for the nightly run to
            reload from the exports.
        periods: every billing period the line items held, for the nightly run to rebuild.
    """

    damaged: tuple[DamagedFile, ...]
    rebuilt: tuple[str, ...]
    reload: tuple[tuple[str, date], ...]
    periods: tuple[date, ...]


def _line_item_partitions(conn: duckdb.DuckDBPyConnection, lake: Lake) -> set[tuple[str, date]]:
    files = conn.execute(read_sql("ops/repair", "files"), {"data_path": lake.data_path}).fetchall()
    return {
        _source_period(_partition(partition_path))
        for table, kind, _, partition_path, _ in files
        if table == LINE_ITEMS and kind == "data"
    }


def repair_lake(conn: duckdb.DuckDBPyConnection, lake: Lake) -> Repair:
    """Drops every table with a missing or damaged file and creates it again, in one commit:
    `focus_line_items` with its readable (source, period)s copied back, the others empty, and
    `step_inputs` emptied so the next run rebuilds everything it computes.

    Args:
        conn: a writable connection to the lake (from `connect`).
        lake: the lake.

    Returns:
        What was found and done; nothing when every file is whole.

    Raises:
        DamagedLake: a file of RunLedger's own records (`RECORDS`) is lost: only a backup holds
            its rows; nothing was changed.
    """
    damaged = damaged_files(conn, lake)
    if not damaged:
        return Repair((), (), (), ())
    records = [file for file in damaged if file.table in RECORDS]
    if records:
        raise DamagedLake(
            "; ".join(file.describe() for file in records)
            + ": these rows are RunLedger's own record, which no export holds; restore the file from a backup of "
            "the lake to that path (the same size), then run `runledger repair` again; nothing was changed"
        )
    tables = sorted({file.table for file in damaged} | {STEP_RECORD})
    reload = sorted({file.source_period for file in damaged if file.source_period})
    partitions = _line_item_partitions(conn, lake)
    kept = sorted(partitions - set(reload))
    for attempt in transactions(conn):
        with attempt:
            if reload:
                conn.execute(f"create or replace temp table repair_{LINE_ITEMS} as from {LINE_ITEMS} limit 0")
                for source_name, billing_period in kept:
                    conn.execute(
                        read_sql("ops/repair", "keep_partition"),
                        {"source_name": source_name, "billing_period": billing_period},
                    )
            for table in tables:
                conn.execute(f"drop table {table}")
            create_schema_statements(conn, partitioned=True)
            if reload:
                conn.execute(f"insert into {LINE_ITEMS} from temp.repair_{LINE_ITEMS}")
            describe_commit(conn, f"repair: {', '.join(tables)} recreated", damaged=damage_message(damaged))
    conn.execute(f"drop table if exists temp.repair_{LINE_ITEMS}")
    return Repair(tuple(damaged), tuple(tables), tuple(reload), tuple(sorted({period for _, period in partitions})))
