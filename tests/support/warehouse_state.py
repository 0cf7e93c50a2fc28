"""What a failed run must leave unchanged: a checksum of every table of the warehouse."""

from __future__ import annotations

from pathlib import Path

from pipelines.warehouse.lake import Lake
from tests.support.lake import reading

JOURNAL = "loads"  # records every attempt, failed ones included; checked separately by the tests


def table_checksums(warehouse: Path | Lake, *, with_journal: bool = False) -> dict[str, tuple]:
    """Rows and a hash of every row of each base table of the warehouse's `main` schema.

    Args:
        warehouse: the lake, or the project folder holding it.
        with_journal: include `loads`, the journal of load attempts (a failed run adds its
            `failed` row there by design).

    Returns:
        table name → (row count, sum of the row hashes).
    """
    with reading(warehouse) as conn:
        tables = [
            name
            for (name,) in conn.execute(
                "select table_name from duckdb_tables() where database_name = 'lake' and not temporary order by 1"
            ).fetchall()
            if with_journal or name != JOURNAL
        ]
        return {
            table: conn.execute(f'select count(*), sum(hash(columns(*))) from "{table}"').fetchone() for table in tables
        }
