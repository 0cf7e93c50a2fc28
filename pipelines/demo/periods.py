"""The demo's calendar: its two billing periods and the hours, days and months usage is cut into."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date, datetime, timedelta

HOUR = timedelta(hours=1)
DAY = timedelta(days=1)
OCTOBER = date(2026, 10, 1)
NOVEMBER = date(2026, 11, 1)
BILLING_PERIODS = (OCTOBER, NOVEMBER)


def start_of(period: date) -> datetime:
    return datetime(period.year, period.month, 1)


def month_after(period: date) -> date:
    return date(period.year + period.month // 12, period.month % 12 + 1, 1)


def month_of(moment: datetime) -> date:
    return date(moment.year, moment.month, 1)


def hours_in_month(moment: datetime) -> float:
    period = month_of(moment)
    return (start_of(month_after(period)) - start_of(period)) / HOUR


def each_hour(start: datetime, end: datetime) -> Iterator[datetime]:
    moment = start
    while moment < end:
        yield moment
        moment += HOUR


def day_slices(start: datetime, end: datetime) -> Iterator[tuple[datetime, datetime]]:
    """[start, end) cut at midnights: full days inside, partial days at the edges."""
    day = datetime(start.year, start.month, start.day)
    while day < end:
        yield max(day, start), min(day + DAY, end)
        day += DAY


def workday_hours(first_day: datetime, end: datetime, hours: tuple[int, int]) -> Iterator[datetime]:
    """Every hour from `hours[0]` to `hours[1]` on Monday to Friday."""
    for day, _ in day_slices(first_day, end):
        if day.weekday() < 5:
            yield from each_hour(day.replace(hour=hours[0]), min(day.replace(hour=hours[1]), end))
