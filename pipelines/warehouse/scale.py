"""The scale of the warehouse's DECIMAL(38, 10) columns, for the Python values staged into them."""

from __future__ import annotations

from decimal import ROUND_HALF_EVEN, Decimal, localcontext

COLUMN_SCALE = Decimal("1e-10")
"""The smallest step of a DECIMAL(38, 10) column."""
PRECISION = 60
"""Digits enough for any value the warehouse holds, and the arithmetic leading to it."""


def at_column_scale(value: Decimal) -> Decimal:
    """`value` at DECIMAL(38, 10)'s scale, rounded half to even, with digits enough for any
    magnitude (quantizing 10^n to 10 places needs n + 11 of them)."""
    with localcontext(prec=max(PRECISION, value.adjusted() + 11)):
        return value.quantize(COLUMN_SCALE, rounding=ROUND_HALF_EVEN)
