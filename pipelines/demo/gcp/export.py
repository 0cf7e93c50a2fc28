"""The demo's GCP detailed billing export: usage rows plus a sales-tax row per invoice month, as
newline-delimited JSON files, one per export day."""

from __future__ import annotations

import json
from collections import defaultdict
from datetime import datetime
from pathlib import Path

from pipelines.demo.gcp.catalog import SALES_TAX, TRAIN_PROJECT
from pipelines.demo.gcp.rows import GCP_COST_DECIMALS, GcpResource, gcp_row, pacific_month_start
from pipelines.demo.periods import BILLING_PERIODS, NOVEMBER, OCTOBER, month_after

GCP_EXPORT_FILE_PREFIX = "gcp_billing_export_resource_v1_01A2B3_C4D5E6_F7A8B9"
GCP_DATA_END = datetime(2026, 11, 29)
GCP_COST_AS_TEXT_EVERY = 3  # JSON exports write some numbers as strings: every third row's cost
GCP_SALES_TAX_RATE = 0.0625
GCP_TAX_EXPORT_TIMES = {
    OCTOBER: datetime(2026, 11, 1, 10, 4, 12, 331907),
    NOVEMBER: datetime(2026, 11, 29, 9, 58, 40, 120554),
}


def write_gcp_export(folder: Path, usage_rows: list[dict], data_end: datetime | None = None) -> None:
    """Every row in the order Google appended them (by export time), one newline-delimited JSON
    file per export day; every third row's cost as a string. With `data_end`, only the rows of
    usage up to then that were exported by then (the month's tax row is not yet)."""
    rows = usage_rows + _tax_rows(usage_rows)
    if data_end is not None:
        rows = [row for row in rows if _gcp_moment(row["export_time"]) <= data_end]
    rows.sort(key=lambda row: row["export_time"])
    folder.mkdir(parents=True, exist_ok=True)
    lines_by_day: dict[str, list[str]] = defaultdict(list)
    for index, row in enumerate(rows):
        if index % GCP_COST_AS_TEXT_EVERY == 0:
            row = row | {"cost": f"{row['cost']:.{GCP_COST_DECIMALS}f}"}
        export_day = row["export_time"][:10].replace("-", "")
        lines_by_day[export_day].append(json.dumps(row, separators=(",", ":")))
    for export_day, lines in sorted(lines_by_day.items()):
        (folder / f"{GCP_EXPORT_FILE_PREFIX}_{export_day}.jsonl").write_text("\n".join(lines) + "\n")


def _gcp_moment(text: str) -> datetime:
    """A timestamp of the export (`2026-10-07 00:00:00.123456 UTC`) as a naive UTC datetime."""
    return datetime.fromisoformat(text.removesuffix(" UTC"))


def _tax_rows(rows: list[dict]) -> list[dict]:
    """One sales-tax row per invoice month, on the month's net cost."""
    net_by_month: dict[str, float] = defaultdict(float)
    for row in rows:
        net_by_month[row["invoice"]["month"]] += row["cost"] + sum(credit["amount"] for credit in row["credits"])
    taxes = []
    for period in BILLING_PERIODS:
        month = f"{period:%Y%m}"
        start, end = pacific_month_start(period), pacific_month_start(month_after(period))
        tax = round(net_by_month[month] * GCP_SALES_TAX_RATE, 2)
        row = gcp_row(
            SALES_TAX, GcpResource(TRAIN_PROJECT, None, None, zone=None), start, end, 0.0, GCP_TAX_EXPORT_TIMES[period]
        )
        no_usage = {"amount": 0.0, "unit": None, "amount_in_pricing_units": 0.0, "pricing_unit": None}
        taxes.append(
            row | {"cost": tax, "cost_at_list": tax, "cost_type": "tax", "invoice": {"month": month}, "usage": no_usage}
        )
    return taxes
