"""A report as a tree of plain blocks, rendered to HTML and to Markdown from the same content.

Building each report once and rendering it twice keeps the two formats in step: they show the
same numbers, formatted by the same functions.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime
from decimal import ROUND_HALF_UP, Decimal

MONEY_QUANTUM = Decimal("0.01")
RATE_QUANTUM = Decimal("0.0001")
HOURS_QUANTUM = Decimal("0.1")
GPU_HOURS_QUANTUM = Decimal("0.01")
PERCENT_QUANTUM = Decimal("0.1")
MISSING = "—"

STATUS_LABELS = {
    "under": "Under",
    "on_track": "On track",
    "within": "Within",
    "warning": "Warning",
    "over": "Over",
}


@dataclass(frozen=True)
class Cell:
    """A table cell: its text, an optional tone (a status) and an optional link.

    Attributes:
        text: what the reader sees.
        tone: a status (`under`, `on_track`, `within`, `warning`, `over`, `none`) the HTML shows as a badge.
        link: a path relative to the document, without suffix; each format adds its own.
    """

    text: str
    tone: str | None = None
    link: str | None = None


@dataclass(frozen=True)
class Table:
    """A table.

    Attributes:
        columns: the column headers.
        rows: the cells, row by row.
        numeric_columns: indexes of right-aligned columns.
        wrapping_columns: indexes of columns whose long values (ARNs...) may wrap; the other
            columns keep each value on one line.
        emphasized_rows: how many rows at the end are totals.
    """

    columns: tuple[str, ...]
    rows: tuple[tuple[Cell, ...], ...]
    numeric_columns: frozenset[int] = frozenset()
    wrapping_columns: frozenset[int] = frozenset()
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
    """A rendered chart: inline SVG for HTML, an image file (SVG, or PNG on demand) for Markdown.

    Attributes:
        title: the chart's title, also its alternative text.
        svg: the SVG document.
        image_path: the chart's image file, relative to the report.
    """

    title: str
    svg: str
    image_path: str


Block = Table | Paragraph | Facts | Chart


@dataclass(frozen=True)
class Section:
    """A titled part of a report."""

    title: str
    blocks: tuple[Block, ...]


@dataclass(frozen=True)
class Document:
    """A whole report.

    Attributes:
        title: its heading.
        subtitle: the line below it.
        badge: a status shown beside the title.
        sections: its parts, in order.
        up: a link above the title (a run report's to the summary), None for none.
    """

    title: str
    subtitle: str
    badge: Cell | None
    sections: tuple[Section, ...]
    up: Cell | None = None


def _formatted(value: Decimal, quantum: Decimal, spec: str, *, signed: bool) -> str:
    """Rounds half up to `quantum` and formats; zero never gets a sign (no `+0.00`, no `-0.00`)."""
    rounded = value.quantize(quantum, rounding=ROUND_HALF_UP)
    if rounded.is_zero():
        return format(abs(rounded), spec)
    return format(rounded, f"+{spec}" if signed else spec)


def money(value: Decimal | None, *, signed: bool = False) -> str:
    """Formats an amount with thousands separators and 2 decimals (half up), e.g. `12,345.68`.

    Args:
        value: the exact amount; rounded only here, for display.
        signed: show a `+` on positive amounts, for variances.
    """
    return MISSING if value is None else _formatted(Decimal(value), MONEY_QUANTUM, ",.2f", signed=signed)


def rate(value: Decimal | None, *, signed: bool = False) -> str:
    """Formats a price per GPU-hour with 4 decimals."""
    return MISSING if value is None else _formatted(Decimal(value), RATE_QUANTUM, ",.4f", signed=signed)


def hours(value: Decimal | None, *, signed: bool = False) -> str:
    """Formats GPU-hours with thousands separators and 1 decimal."""
    return MISSING if value is None else _formatted(Decimal(value), HOURS_QUANTUM, ",.1f", signed=signed)


def gpu_hours(value: Decimal | None) -> str:
    """Formats a cluster's GPU-hours with 2 decimals, as exact as a quarter hour of one GPU."""
    return MISSING if value is None else _formatted(Decimal(value), GPU_HOURS_QUANTUM, ",.2f", signed=False)


def percent(ratio: float | Decimal | None, *, signed: bool = False) -> str:
    """Formats a ratio as a percentage with 1 decimal, e.g. `0.125` as `12.5 %`."""
    if ratio is None:
        return MISSING
    return _formatted(Decimal(str(ratio)) * 100, PERCENT_QUANTUM, ",.1f", signed=signed) + " %"


def timestamp(value: datetime | None) -> str:
    """Formats a UTC moment to the minute, e.g. `2026-10-31 23:00 UTC`."""
    return MISSING if value is None else f"{value:%Y-%m-%d %H:%M} UTC"


def billing_period_label(period: date) -> str:
    """Shows a billing period by its month, e.g. `2026-10`."""
    return period.strftime("%Y-%m")


def status_cell(status: str | None) -> Cell:
    """Shows a budget status as a toned cell; no status reads as a dash."""
    if status is None:
        return Cell(MISSING)
    return Cell(STATUS_LABELS.get(status, status), tone=status)


def text_cell(value: object | None) -> Cell:
    """Shows any value as plain text; no value reads as a dash."""
    return Cell(MISSING if value is None or value == "" else str(value))
