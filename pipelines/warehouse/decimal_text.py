"""The warehouse's DECIMAL values as text: plain decimal notation, never an exponent.

A DECIMAL(p, s) value arrives as a `Decimal` with exactly s decimals; Python's `str` writes a
zero of scale 10 as `0E-10` and small amounts with an exponent. Every output that writes a
DECIMAL as text (`runledger query` in each format, the Dagster metadata of the checks) writes it
with `plain`: every decimal of its column's scale (`0.0000000000`, `-12.5000000000`), exact.
A table on a terminal is for reading: it shows a column at one scale (`table_places`), money in
cents (`rounded`), so its decimal points line up.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from decimal import ROUND_HALF_UP, Decimal, localcontext

MONEY_PLACES = 2
# Every amount RunLedger loads or a budget gives is below this in magnitude (docs/semantics.md,
# "Amounts"): the sums, shares and exact divisions (`decimal_divide`) of later steps then stay
# within DECIMAL(38, 10) and HUGEINT. The SQL macro `money_limit` (sql/staging/macros.sql) is the
# same number.
AMOUNT_LIMIT = Decimal(10) ** 15
# Digits enough for any DECIMAL DuckDB holds (38) rounded to any scale it has.
_ROUNDING_DIGITS = 80


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


def table_places(values: Iterable[Decimal]) -> int:
    """The decimals a table column of `values` shows: none for whole numbers (counts, sums of
    integers); for fractions, where every value lies between -1 and 1 (shares, ratios, unit
    prices), every decimal a value needs and at least 2; else 2, amounts read as money, in cents."""
    values = list(values)
    if all(v.as_tuple().exponent >= 0 for v in values):
        return 0
    if all(abs(v) <= 1 for v in values):
        return max([MONEY_PLACES, *(_places_needed(v) for v in values)])
    return MONEY_PLACES


def rounded(value: Decimal, places: int) -> Decimal:
    """`value` to `places` decimals, a half away from zero (as the reports round)."""
    with localcontext(prec=_ROUNDING_DIGITS, rounding=ROUND_HALF_UP):
        return value.quantize(Decimal(1).scaleb(-places))


def as_text(value: object) -> str:
    """A value of a result row as text: a DECIMAL in plain notation, a list or map as JSON (its
    DECIMALs as strings in plain notation), anything else as `str` gives it."""
    if isinstance(value, Decimal):
        return plain(value)
    if isinstance(value, list | dict):
        return json.dumps(value, default=as_text, ensure_ascii=False)
    return str(value)
