"""How `runledger` prints: tables of rows, and the run's progress bar on a terminal."""

from __future__ import annotations

import csv
import json
import re
import sys
import textwrap
from collections.abc import Iterable, Iterator, Sequence
from decimal import Decimal
from itertools import islice

import click

# Control characters: C0 (escape, newline, carriage return, …), DEL and C1.
CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")
NAMED_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
# A table prints its rows in blocks of this many, each laid out as it comes.
TABLE_BLOCK_ROWS = 1000


def printable(text: str) -> str:
    """`text` with every control character written as an escape (`\\n`, `\\x1b`): a run id or a
    tag cannot recolour, retitle or clear the terminal, or split a row, on its way to a reader."""
    return CONTROL.sub(lambda match: NAMED_ESCAPES.get(match[0]) or f"\\x{ord(match[0]):02x}", text)


def print_table(columns: Sequence[str], rows: Iterable[tuple]) -> None:
    """Rows as a table for reading: control characters escaped (`printable`), DECIMALs rounded to
    the places of their column (`table_places`: money in cents), numbers right-aligned. Printed
    `TABLE_BLOCK_ROWS` at a time, as they arrive: each block is laid out from its own rows, the
    header from the first, and a column widens for a later block that needs it, never narrows."""
    widths = [len(printable(c)) for c in columns]
    header = True
    for block in _blocks(iter(rows)):
        cells, numeric = _table_cells(block, len(columns))
        widths = [max([w, *(len(r[i]) for r in cells)]) for i, w in enumerate(widths)]

        def line(values: list[str], widths: list[int] = widths, numeric: list[bool] = numeric) -> str:
            return "  ".join(v.rjust(w) if n else v.ljust(w) for v, w, n in zip(values, widths, numeric)).rstrip()

        if header:
            header = False
            click.echo(line([printable(c) for c in columns]))
            click.echo("  ".join("-" * w for w in widths))
        sys.stdout.write("".join(line(row) + "\n" for row in cells))


def _blocks(rows: Iterator[tuple]) -> Iterator[list[tuple]]:
    """`rows` in lists of `TABLE_BLOCK_ROWS`; one empty list for no rows (the header still prints)."""
    block = list(islice(rows, TABLE_BLOCK_ROWS))
    yield block
    while block := list(islice(rows, TABLE_BLOCK_ROWS)):
        yield block


def _table_cells(rows: list[tuple], width: int) -> tuple[list[list[str]], list[bool]]:
    """The text of each cell of `rows`, and which columns are numeric (right-aligned)."""
    from pipelines.warehouse.decimal_text import as_text, plain, rounded, table_places

    places = [table_places(row[i] for row in rows if isinstance(row[i], Decimal)) for i in range(width)]

    def cell(value: object, places: int) -> str:
        if value is None:
            return ""
        if isinstance(value, Decimal):
            return plain(rounded(value, places), places, grouped=True)
        return printable(as_text(value))

    cells = [[cell(v, p) for v, p in zip(row, places)] for row in rows]
    numeric = [all(isinstance(row[i], int | float | Decimal) or row[i] is None for row in rows) for i in range(width)]
    return cells, numeric


def write_csv(columns: Sequence[str], rows: Iterable[tuple]) -> None:
    """Rows as CSV, exact (DECIMALs in plain notation, every decimal), a row as soon as it comes."""
    from pipelines.warehouse.decimal_text import as_text

    writer = csv.writer(sys.stdout)
    writer.writerow(columns)
    writer.writerows([None if v is None else as_text(v) for v in row] for row in rows)


def write_json(columns: Sequence[str], rows: Iterable[tuple]) -> None:
    """Rows as a JSON array of objects (DECIMALs as strings of their exact text), written an
    object at a time: the same text as `json.dumps(rows, indent=2)`, without holding the rows."""
    from pipelines.warehouse.decimal_text import as_text

    opening = "[\n"
    for row in rows:
        text = json.dumps(dict(zip(columns, row)), default=as_text, indent=2)
        sys.stdout.write(opening + textwrap.indent(text, "  "))
        opening = ",\n"
    sys.stdout.write("[]\n" if opening == "[\n" else "\n]\n")


class TerminalProgress:
    """A progress bar of the run's stages on the last line of a terminal's stderr; the stage lines
    scroll above it. Only for a terminal: a log or a pipe gets the stage lines alone."""

    WIDTH = 30

    def __init__(self) -> None:
        self._bar = ""

    def echo(self, line: str) -> None:
        self._clear()
        click.echo(line, err=True)
        self._draw()

    def update(self, done: int, total: int, stage: str) -> None:
        filled = self.WIDTH * done // max(total, 1)
        self._clear()
        self._bar = f"[{'#' * filled}{'-' * (self.WIDTH - filled)}] {done}/{total} stages: {stage}"
        self._draw()

    def close(self) -> None:
        self._clear()
        self._bar = ""

    def _clear(self) -> None:
        if self._bar:
            click.echo("\r\x1b[K", err=True, nl=False)

    def _draw(self) -> None:
        if self._bar:
            click.echo(self._bar, err=True, nl=False)
