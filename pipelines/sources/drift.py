"""Schema drift: the columns a source delivered against the columns its reader expects.

A column is *missing* when the reader maps it and the delivery lacks it (the reader then fills
NULL, so the load still succeeds with less information). A column is *new* when the format's
documented schema does not know it: AWS renamed or added something, Google added a column, a
FOCUS export carries a column of a newer FOCUS version or one of its own without the `x_` prefix
(kept, as every column of a FOCUS file the table has no column for, in x_ExtraColumns). Either is
worth a warning, never a failed load. Each kind compares its own formats (its `drift`); the FOCUS
formats (`focus`, `aws_focus`) share `focus_drift`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from pipelines.sources import focus_files
from pipelines.warehouse.catalog import table_columns

FOCUS_MAPPED_COLUMNS = (
    *focus_files.REQUIRED_COLUMNS,
    "ChargeCategory",
    "ChargePeriodEnd",
    "BillingPeriodEnd",
    "ResourceId",
    "ServiceName",
    "Tags",
)


@dataclass(frozen=True)
class ColumnDrift:
    """How a delivery's columns differ from what the reader expects.

    Attributes:
        missing: columns the reader maps that the delivery lacks.
        new: columns the delivery has that the format's known schema does not.
    """

    missing: tuple[str, ...]
    new: tuple[str, ...]

    @property
    def drifted(self) -> bool:
        return bool(self.missing or self.new)


def compare_columns(expected: Sequence[str], columns: Sequence[str], known: Callable[[str], bool]) -> ColumnDrift:
    """The `expected` columns the delivery lacks and its columns `known` does not know."""
    present = set(columns)
    return ColumnDrift(
        missing=tuple(c for c in expected if c not in present), new=tuple(c for c in columns if not known(c))
    )


def focus_drift(source_format: str, columns: list[str]) -> ColumnDrift:
    """A FOCUS delivery's drift: every FOCUS 1.0-1.2 column is a focus_line_items column; x_
    columns are the export's own."""
    return compare_columns(
        FOCUS_MAPPED_COLUMNS,
        columns,
        lambda column: column in table_columns("focus_line_items") or column.startswith("x_"),
    )
