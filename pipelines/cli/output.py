"""How `runledger` prints: tables of rows, and the run's progress bar on a terminal."""

from __future__ import annotations

from decimal import Decimal

import click


def print_table(columns: list[str], rows: list[tuple]) -> None:
    from pipelines.warehouse.decimal_text import as_text, column_places, plain

    places = [column_places(row[i] for row in rows if isinstance(row[i], Decimal)) for i in range(len(columns))]
    cells = [
        [
            "" if v is None else plain(v, p, grouped=True) if isinstance(v, Decimal) else as_text(v)
            for v, p in zip(row, places)
        ]
        for row in rows
    ]
    widths = [max([len(c)] + [len(r[i]) for r in cells]) for i, c in enumerate(columns)]
    numeric = [
        all(isinstance(row[i], int | float | Decimal) or row[i] is None for row in rows) for i in range(len(columns))
    ]

    def line(values: list[str]) -> str:
        return "  ".join(v.rjust(w) if n else v.ljust(w) for v, w, n in zip(values, widths, numeric)).rstrip()

    click.echo(line(columns))
    click.echo("  ".join("-" * w for w in widths))
    for row in cells:
        click.echo(line(row))


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
