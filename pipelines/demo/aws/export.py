"""The demo's CUR 2.0 export in the Data Exports layout: one execution folder of Parquet files per
delivery, and a manifest for each billing period's latest delivery."""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import json
import math
import random
import uuid
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from pathlib import Path

from pipelines.demo.aws.catalog import (
    AWS_LEGAL_ENTITY,
    PAYER_ACCOUNT_ID,
    PAYER_ACCOUNT_NAME,
    PROMOTIONAL_CREDIT,
    SUPPORT_FEE,
)
from pipelines.demo.aws.charges import (
    PROMOTIONAL_CREDIT_AMOUNTS,
    business_support_fee,
    period_charge,
    reserved_instance_fee,
    savings_plan_fees,
    tax_lines,
)
from pipelines.demo.aws.columns import CUR_COLUMNS, CUR_SCHEMA, MANIFEST_TYPE_NAMES
from pipelines.demo.files import write_parquet
from pipelines.demo.periods import NOVEMBER, OCTOBER, month_after, start_of

CUR_EXPORT_NAME = "cur2-demo"
CUR_S3_PREFIX = "s3://runledger-demo-billing/cur/cur2-demo"
CUR_EXPORT_ARN = "arn:aws:bcm-data-exports:us-east-1:111122223333:export/cur2-demo-8c1e4f2a-5b7d-4e90-a3c6-1f2e3d4c5b6a"
CUR_DATA_FILES_PER_DELIVERY = 2
OCTOBER_INVOICE_ID = "2026110341179"
AWS_DATA_END = datetime(2026, 11, 29)  # the November delivery covers usage up to here
CUR_EXPORT_LAG = timedelta(hours=3, minutes=15)  # each export runs at 03:15 after its data end


@dataclass(frozen=True)
class CurExecution:
    """One run of the CUR 2.0 export for a billing period: one delivery, one execution folder.

    Attributes:
        period: first day of the billing period.
        executed_at: when the export ran (names the execution folder).
        data_end: usage ending after this is not in the delivery yet.
        invoice_id: `bill_invoice_id`, None while the period is open.
        in_manifest: False for an older execution the manifest no longer lists.
    """

    period: date
    executed_at: datetime
    data_end: datetime
    invoice_id: str | None
    in_manifest: bool


CUR_EXECUTIONS = (
    CurExecution(OCTOBER, datetime(2026, 10, 15, 3, 15), datetime(2026, 10, 14), None, in_manifest=False),
    CurExecution(OCTOBER, datetime(2026, 11, 3, 3, 15), datetime(2026, 11, 1), OCTOBER_INVOICE_ID, in_manifest=True),
    CurExecution(NOVEMBER, datetime(2026, 11, 29, 3, 15), AWS_DATA_END, None, in_manifest=True),
)


def write_cur_export(
    export_root: Path, usage_lines: list[dict], rng: random.Random, data_end: datetime | None = None
) -> None:
    """Every delivery's data files; a manifest for each period's latest delivery.

    With `data_end`, the export as it stood then: each delivery stops at `data_end`, and periods
    starting at or after it have none.
    """
    for delivery in CUR_EXECUTIONS:
        execution_id = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        if data_end is not None:
            if start_of(delivery.period) >= data_end:
                continue
            delivery = _delivery_cut_at(delivery, data_end)
        partition = f"BILLING_PERIOD={delivery.period:%Y-%m}"
        execution_folder = f"{delivery.executed_at:%Y%m%dT%H%M%SZ}-{execution_id}"
        lines = _cur_snapshot(delivery, usage_lines)
        files = _write_cur_data_files(export_root / "data" / partition / execution_folder, lines)
        if delivery.in_manifest:
            data_uris = [f"{CUR_S3_PREFIX}/data/{partition}/{execution_folder}/{name}" for name in files]
            _write_cur_manifest(
                export_root / "metadata" / partition / f"{CUR_EXPORT_NAME}-Manifest.json", execution_id, data_uris
            )


def _delivery_cut_at(delivery: CurExecution, data_end: datetime) -> CurExecution:
    """The delivery of the export's run the night after `data_end`, the period still open."""
    return dataclasses.replace(
        delivery,
        executed_at=min(delivery.executed_at, data_end + CUR_EXPORT_LAG),
        data_end=min(delivery.data_end, data_end),
        invoice_id=None,
    )


def _cur_snapshot(delivery: CurExecution, usage_lines: list[dict]) -> list[dict]:
    """Every line of one delivery: the period's usage so far plus its fees, credit and tax."""
    period_start = start_of(delivery.period)
    cutoff = min(start_of(month_after(delivery.period)), delivery.data_end)
    usage = [
        line
        for line in usage_lines
        if line["line_item_usage_start_date"] >= period_start and line["line_item_usage_end_date"] <= cutoff
    ]
    charges = usage + savings_plan_fees(usage, period_start, cutoff) + [reserved_instance_fee(usage, delivery.period)]
    support = business_support_fee(sum(line["line_item_unblended_cost"] for line in charges))
    charges.append(period_charge(SUPPORT_FEE, "Fee", delivery.period, support))
    lines = charges + tax_lines(charges, delivery.period)
    credit = PROMOTIONAL_CREDIT_AMOUNTS[delivery.period]
    lines.append(period_charge(PROMOTIONAL_CREDIT, "Credit", delivery.period, credit))
    lines.sort(key=lambda line: line["line_item_usage_start_date"])
    return [_with_bill_columns(_with_identity(line), delivery) for line in lines]


def _with_identity(line: dict) -> dict:
    """identity_*: a line id stable across deliveries and hours, unique with the time interval."""
    key = "|".join(
        str(line[column])
        for column in (
            "line_item_usage_account_id",
            "line_item_line_item_type",
            "line_item_product_code",
            "line_item_usage_type",
            "line_item_operation",
            "line_item_resource_id",
            "line_item_line_item_description",
        )
    )
    digest = base64.b32encode(hashlib.sha256(key.encode()).digest()).decode().lower().rstrip("=")
    start, end = line["line_item_usage_start_date"], line["line_item_usage_end_date"]
    return line | {
        "identity_line_item_id": digest[:52],
        "identity_time_interval": f"{start:%Y-%m-%dT%H:%M:%SZ}/{end:%Y-%m-%dT%H:%M:%SZ}",
    }


def _with_bill_columns(line: dict, delivery: CurExecution) -> dict:
    return line | {
        "bill_bill_type": "Anniversary",
        "bill_billing_entity": "AWS",
        "bill_billing_period_start_date": start_of(delivery.period),
        "bill_billing_period_end_date": start_of(month_after(delivery.period)),
        "bill_invoice_id": delivery.invoice_id,
        "bill_invoicing_entity": AWS_LEGAL_ENTITY,
        "bill_payer_account_id": PAYER_ACCOUNT_ID,
        "bill_payer_account_name": PAYER_ACCOUNT_NAME,
    }


def _write_cur_data_files(folder: Path, lines: list[dict]) -> list[str]:
    """Splits the lines into the delivery's Parquet files; returns their names."""
    size = math.ceil(len(lines) / CUR_DATA_FILES_PER_DELIVERY)
    names = []
    for index in range(CUR_DATA_FILES_PER_DELIVERY):
        name = f"{CUR_EXPORT_NAME}-{index + 1:05d}.snappy.parquet"
        chunk = lines[index * size : (index + 1) * size]
        write_parquet(folder / name, [_parquet_row(line) for line in chunk], CUR_SCHEMA)
        names.append(name)
    return names


def _parquet_row(line: dict) -> dict:
    """Map columns as sorted (key, value) pairs, the form pyarrow expects."""
    return {name: sorted(line[name].items()) if isinstance(line[name], dict) else line[name] for name, _ in CUR_COLUMNS}


def _write_cur_manifest(path: Path, execution_id: str, data_uris: list[str]) -> None:
    manifest = {
        "executionId": execution_id,
        "exportArn": CUR_EXPORT_ARN,
        "columns": [{"name": name, "type": MANIFEST_TYPE_NAMES[data_type]} for name, data_type in CUR_COLUMNS],
        "dataFiles": data_uris,
        "additionalOutputFiles": [],
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(manifest, indent=2) + "\n")
