"""A report as a tree of plain blocks, rendered to HTML and to Markdown from the same content.

Building each report once and rendering it twice keeps the two formats in step: they show the
same numbers, formatted by the same functions.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal

MONEY_QUANTUM = Decimal("0.01")
RATE_QUANTUM = Decimal("0.0001")
HOURS_QUANTUM = Decimal("0.1")
MISSING = "—"

STATUS_LABELS = {
    "under": "Under",
    "on_track": "On track",
    "warning": "Warning",
    "over": "Over",
}


@dataclass(frozen=True)
class Cell:
    """A table cell: its text, an optional tone (a status) and an optional link.

    Attributes:
        text: what the reader sees.
        tone: a status (`under`, `on_track`, `warning`, `over`, `none`) the HTML shows as a badge.
        link: a path relative to the document, without suffix; each format adds its own.
    """

    text: str
    tone: str | None = None
    link: str | None = None


@dataclass(frozen=True)
class Table:
    """A table; numeric columns are right-aligned and the last `emphasized_rows` are totals."""

    columns: tuple[str, ...]
    rows: tuple[tuple[Cell, ...], ...]
    numeric_columns: frozenset[int] = frozenset()
    emphasized_rows: int = 0


@dataclass(frozen=True)
class Paragraph:
    """A line of text; a tone makes the HTML show it as a call-out."""

    text: str
    tone: str | None = None


@dataclass(frozen=True)
class Facts:
    """Label and value pairs, such as a report's header."""

    items: tuple[tuple[str, Cell], ...]


@dataclass(frozen=True)
class Chart:
    """A rendered chart: inline SVG for HTML, a PNG file for Markdown.

    Attributes:
        title: the chart's title, also its alternative text.
        svg: the SVG document.
        png_path: the PNG's path relative to the report.
    """

    title: str
    svg: str
    png_path: str


Block = Table | Paragraph | Facts | Chart


@dataclass(frozen=True)
class Section:
    """A titled part of a report."""

    title: str
    blocks: tuple[Block, ...]


@dataclass(frozen=True)
class Document:
    """A whole report."""

    title: str
    subtitle: str
    badge: Cell | None
    sections: tuple[Section, ...]


def _quantized(value: Decimal, quantum: Decimal) -> Decimal:
    return value.quantize(quantum, rounding=ROUND_HALF_UP)


def money(value: Decimal | None, *, signed: bool = False) -> str:
    """Formats an amount with thousands separators and 2 decimals (half up), e.g. `12,345.68`.

    Args:
        value: the exact amount; rounded only here, for display.
        signed: show a `+` on positive amounts, for variances.
    """
    if value is None:
        return MISSING
    return format(_quantized(Decimal(value), MONEY_QUANTUM), "+,.2f" if signed else ",.2f")


def rate(value: Decimal | None, *, signed: bool = False) -> str:
    """Formats a price per GPU-hour with 4 decimals."""
    if value is None:
        return MISSING
    return format(_quantized(Decimal(value), RATE_QUANTUM), "+,.4f" if signed else ",.4f")


def hours(value: Decimal | None, *, signed: bool = False) -> str:
    """Formats GPU-hours with thousands separators and 1 decimal."""
    if value is None:
        return MISSING
    return format(_quantized(Decimal(value), HOURS_QUANTUM), "+,.1f" if signed else ",.1f")


def percent(ratio: float | Decimal | None, *, signed: bool = False) -> str:
    """Formats a ratio as a percentage with 1 decimal, e.g. `0.125` as `12.5 %`."""
    if ratio is None:
        return MISSING
    number = _quantized(Decimal(str(ratio)) * 100, Decimal("0.1"))
    return f"{number:+,.1f} %" if signed else f"{number:,.1f} %"


def status_cell(status: str | None) -> Cell:
    """Shows a budget status as a toned cell; no status reads as a dash."""
    if status is None:
        return Cell(MISSING)
    return Cell(STATUS_LABELS.get(status, status), tone=status)


def text_cell(value: object | None) -> Cell:
    """Shows any value as plain text; no value reads as a dash."""
    return Cell(MISSING if value is None or value == "" else str(value))
