"""Amounts and rates as the demo's exports write them: rounded to the warehouse's ten decimals."""

from __future__ import annotations

MONEY_DECIMALS = 10


def money(amount: float) -> float:
    return round(amount, MONEY_DECIMALS)


def rate_text(rate: float) -> str:
    """A rate as the CUR's string-typed rate columns hold it."""
    return repr(round(rate, MONEY_DECIMALS))
