"""The bench's own SQL statements, under `bench/sql/` (the product's live under `sql/`)."""

from functools import cache
from pathlib import Path

BENCH_SQL_DIR = Path(__file__).resolve().parent / "sql"


@cache
def read_bench_sql(name: str) -> str:
    """Returns the text of `bench/sql/<name>.sql`.

    Args:
        name: file name without the `.sql` suffix.
    """
    return (BENCH_SQL_DIR / f"{name}.sql").read_text()
