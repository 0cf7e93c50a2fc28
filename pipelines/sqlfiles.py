"""Access to the SQL files under `sql/`: every statement the product runs lives there."""

from functools import cache
from pathlib import Path

SQL_DIR = Path(__file__).resolve().parent.parent / "sql"


@cache
def read_sql(name: str) -> str:
    """Returns the text of `sql/<name>.sql`.

    Args:
        name: file name without the `.sql` suffix, e.g. `run_costs`.
    """
    return (SQL_DIR / f"{name}.sql").read_text()
