"""Monthly billing-period partitions, the current month included."""

from datetime import date

import dagster as dg

FIRST_BILLING_PERIOD = date(2020, 1, 1)

billing_periods = dg.MonthlyPartitionsDefinition(start_date=FIRST_BILLING_PERIOD.isoformat(), end_offset=1)


def partition_key(billing_period: date) -> str:
    """The partition key of a billing period (`YYYY-MM-01`)."""
    return f"{billing_period:%Y-%m}-01"


def billing_period_of(key: str) -> date:
    """The billing period (first day of the month) of a partition key."""
    return date.fromisoformat(key)


def unpartitioned_reason(billing_period: date) -> str | None:
    """Why a billing period has no partition (it is before the first or after the current
    month), or None when it has one."""
    if billing_periods.has_partition_key(partition_key(billing_period)):
        return None
    last = billing_period_of(billing_periods.get_last_partition_key())
    return (
        f"billing period {billing_period:%Y-%m} is outside the billing periods RunLedger loads, "
        f"{FIRST_BILLING_PERIOD:%Y-%m} to {last:%Y-%m} (the monthly Dagster partitions)"
    )
