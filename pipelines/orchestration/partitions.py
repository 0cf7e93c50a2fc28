"""Monthly billing-period partitions, the current month included."""

from datetime import date

import dagster as dg

billing_periods = dg.MonthlyPartitionsDefinition(start_date="2020-01-01", end_offset=1)


def partition_key(billing_period: date) -> str:
    """The partition key of a billing period (`YYYY-MM-01`)."""
    return f"{billing_period:%Y-%m}-01"


def billing_period_of(key: str) -> date:
    """The billing period (first day of the month) of a partition key."""
    return date.fromisoformat(key)
