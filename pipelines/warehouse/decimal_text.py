"""The warehouse's DECIMAL values as text: plain decimal notation, never an exponent.

A DECIMAL(p, s) value arrives as a `Decimal` with exactly s decimals; Python's `str` writes a
zero of scale 10 as `0E-10` and small amounts with an exponent. Every output that writes a
DECIMAL as text (`runledger query` in each format, the Dagster metadata of the checks) writes it
with `plain`: every decimal of its column's scale (`0.0000000000`, `-12.5000000000`), exact.
A table on a terminal shows a column at one scale (`column_places`), so its decimal points line
up.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from decimal import Decimal

MONEY_PLACES = 2
# Every amount RunLedger loads or a budget gives is below this in magnitude (docs/semantics.md,
# "Amounts"): the sums, shares and exact divisions (`decimal_divide`) of later steps then stay
# within DECIMAL(38, 10) and HUGEINT. The SQL macro `money_limit` (sql/staging/macros.sql) is the
# same number.
AMOUNT_LIMIT = Decimal(10) ** 15


def plain(value: Decimal, places: int | None = None, *, grouped: bool = False) -> str:
    """`value` in plain decimal notation, exact, a zero without a sign.

    Args:
        value: the number as the warehouse returns it.
        places: the decimals to write (at least the ones `value` needs, so nothing is rounded);
            None writes the decimals of its scale.
        grouped: thousands separators (`12,345.50`), for tables.
    """
    if value.is_zero():
        value = abs(value)
    decimals = max(-value.as_tuple().exponent, 0) if places is None else places
    return format(value, f"{',' if grouped else ''}.{decimals}f")


def _places_needed(value: Decimal) -> int:
    """The decimals `value` needs to be written exactly: its scale without trailing zeros."""
    if value.is_zero():
        return 0
    _, digits, exponent = value.as_tuple()
    trailing = len(digits) - len("".join(map(str, digits)).rstrip("0"))
    return max(-exponent - trailing, 0)


def column_places(values: Iterable[Decimal]) -> int:
    """The decimals a table column of `values` is written with: every decimal a value of it needs,
    and at least 2 unless the column holds whole numbers (amounts read as money: `0.00`)."""
    values = list(values)
    fractional = any(v.as_tuple().exponent < 0 for v in values)
    return max([MONEY_PLACES if fractional else 0, *(_places_needed(v) for v in values)])


def as_text(value: object) -> str:
    """A value of a result row as text: a DECIMAL in plain notation, a list or map as JSON (its
    DECIMALs as strings in plain notation), anything else as `str` gives it."""
    if isinstance(value, Decimal):
        return plain(value)
    if isinstance(value, list | dict):
        return json.dumps(value, default=as_text, ensure_ascii=False)
    return str(value)
