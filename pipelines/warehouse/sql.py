"""The SQL the product runs: every statement lives in a file under `sql/`, grouped by layer.

A file holds one statement, or several named ones: a line `-- name: <name>` starts each, so the
small statements on one table live in that table's file (`read_sql("ops/loads", "insert")`). A
source kind keeps the SQL of its own format beside its code (`pipelines/sources/<kind>/`), read
the same way by `read_sql_file`.
"""

import re
from functools import cache
from pathlib import Path

import duckdb

SQL_DIR = Path(__file__).resolve().parents[2] / "sql"
NAME_LINE = re.compile(r"^-- name: (\w+)[ \t]*$", re.MULTILINE)


@cache
def _statements(file: Path) -> dict[str | None, str]:
    text = file.read_text()
    parts = NAME_LINE.split(text)
    if len(parts) == 1:
        return {None: text}
    return {parts[i]: parts[i + 1].strip() + "\n" for i in range(1, len(parts), 2)}


def read_sql(path: str, name: str | None = None) -> str:
    """The text of `sql/<path>.sql`, or of its statement `name`.

    Args:
        path: the file under `sql/` without `.sql`, e.g. `marts/run_costs`.
        name: the statement of a file of named statements, e.g. `preview`.

    Raises:
        KeyError: the file has no such statement (or has named statements and none was asked).
    """
    return _statement(SQL_DIR / f"{path}.sql", f"sql/{path}.sql", name)


def read_sql_file(file: Path, name: str | None = None) -> str:
    """The text of a `.sql` file outside `sql/` (a source kind's), or of its statement `name`, read
    as `read_sql` reads the files of `sql/`.

    Raises:
        KeyError: the file has no such statement (or has named statements and none was asked).
    """
    return _statement(file, str(file), name)


def _statement(file: Path, shown_as: str, name: str | None) -> str:
    statements = _statements(file)
    if name not in statements:
        raise KeyError(f"{shown_as} has no statement {name!r}; it has: {', '.join(map(str, statements))}")
    return statements[name]


def dict_rows(result: duckdb.DuckDBPyConnection) -> list[dict[str, object]]:
    """The rows of an executed statement as dicts keyed by column name, the one way the product
    reads rows by name (never by position)."""
    names = [column[0] for column in result.description]
    return [dict(zip(names, row, strict=True)) for row in result.fetchall()]
