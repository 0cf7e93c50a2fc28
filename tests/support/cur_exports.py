"""Test helpers: AWS billing exports written in their real layouts to a local folder or an S3
bucket (moto server), and small CUR line sets whose totals the tests compute with Decimal."""

from __future__ import annotations

import csv
import gzip
import io
import json
import zipfile
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path
from typing import Protocol

import dagster as dg
import pyarrow as pa
import pyarrow.parquet as pq

from pipelines.orchestration.resources import RunLedgerResource
from tests.support.lake import reading


class Sink(Protocol):
    def put(self, key: str, data: bytes) -> None: ...

    def delete(self, key: str) -> None: ...


@dataclass
class FolderSink:
    """Writes objects as files below a folder (the export copied locally)."""

    root: Path

    def put(self, key: str, data: bytes) -> None:
        path = self.root / key
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)

    def delete(self, key: str) -> None:
        (self.root / key).unlink()


@dataclass
class BucketSink:
    """Writes objects into an S3 bucket through boto3."""

    client: object
    bucket: str

    def put(self, key: str, data: bytes) -> None:
        self.client.put_object(Bucket=self.bucket, Key=key, Body=data)

    def delete(self, key: str) -> None:
        self.client.delete_object(Bucket=self.bucket, Key=key)


@dataclass(frozen=True)
class Line:
    """One CUR line as a test writes it: cost as decimal text, so totals are exact."""

    line_id: str
    period: date
    day: int
    line_type: str
    cost: str
    resource_id: str = ""
    training_run: str = ""

    @property
    def start(self) -> datetime:
        return datetime(self.period.year, self.period.month, self.day)

    @property
    def end(self) -> datetime:
        return datetime(self.period.year, self.period.month, self.day, 1)


def lines(period: date, prefix: str, costs: list[str], training_run: str = "") -> list[Line]:
    """Usage lines of a period, one per cost, on consecutive days."""
    return [
        Line(f"{prefix}-{index}", period, index + 1, "Usage", cost, f"i-{prefix}{index:04d}", training_run)
        for index, cost in enumerate(costs)
    ]


def total(items: list[Line]) -> Decimal:
    return sum((Decimal(line.cost) for line in items), Decimal(0))


def _month_after(period: date) -> date:
    return date(period.year + period.month // 12, period.month % 12 + 1, 1)


LEGACY_HEADERS = [
    "identity/LineItemId",
    "identity/TimeInterval",
    "bill/PayerAccountId",
    "bill/BillingPeriodStartDate",
    "bill/BillingPeriodEndDate",
    "lineItem/UsageAccountId",
    "lineItem/LineItemType",
    "lineItem/UsageStartDate",
    "lineItem/UsageEndDate",
    "lineItem/ProductCode",
    "lineItem/UsageType",
    "lineItem/ResourceId",
    "lineItem/UsageAmount",
    "lineItem/CurrencyCode",
    "lineItem/UnblendedCost",
    "product/ProductName",
    "product/region",
    "product/instanceType",
    "pricing/term",
    "resourceTags/user:training_run",
]


def legacy_csv(items: list[Line], compression: str = "gz") -> bytes:
    """Legacy CUR CSV text (every value a string, `.000Z` timestamps), gzipped or zipped."""
    text = io.StringIO()
    writer = csv.writer(text)
    writer.writerow(LEGACY_HEADERS)
    for line in items:
        end = _month_after(line.period)
        writer.writerow(
            [
                line.line_id,
                f"{line.start:%Y-%m-%dT%H:%M:%SZ}/{line.end:%Y-%m-%dT%H:%M:%SZ}",
                "111122223333",
                f"{line.period:%Y-%m-%d}T00:00:00.000Z",
                f"{end:%Y-%m-%d}T00:00:00.000Z",
                "111122223333",
                line.line_type,
                f"{line.start:%Y-%m-%dT%H:%M:%S}.000Z",
                f"{line.end:%Y-%m-%dT%H:%M:%S}.000Z",
                "AmazonEC2",
                "USE1-BoxUsage:p5.48xlarge",
                line.resource_id,
                "1.0",
                "USD",
                line.cost,
                "Amazon Elastic Compute Cloud",
                "us-east-1",
                "p5.48xlarge",
                "OnDemand",
                line.training_run,
            ]
        )
    raw = text.getvalue().encode()
    if compression == "gz":
        return gzip.compress(raw, mtime=0)
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as zipped:
        zipped.writestr("report.csv", raw)
    return archive.getvalue()


def legacy_manifest(report: str, period: date, assembly: str, keys: list[str], bucket: str) -> bytes:
    end = _month_after(period)
    return json.dumps(
        {
            "assemblyId": assembly,
            "account": "111122223333",
            "columns": [
                {"category": h.split("/")[0], "name": h.split("/")[1], "type": "String"} for h in LEGACY_HEADERS
            ],
            "charset": "UTF-8",
            "compression": "GZIP",
            "contentType": "text/csv",
            "reportName": report,
            "billingPeriod": {"start": f"{period:%Y%m%d}T000000.000Z", "end": f"{end:%Y%m%d}T000000.000Z"},
            "bucket": bucket,
            "reportKeys": keys,
            "additionalArtifactKeys": [],
        }
    ).encode()


def write_legacy_delivery(
    sink: Sink,
    prefix: str,
    report: str,
    period: date,
    assembly: str | None,
    files: list[list[Line]],
    *,
    bucket: str = "billing",
    compression: str = "gz",
) -> list[str]:
    """A legacy CUR CSV delivery: CREATE_NEW (`assembly` folder) or OVERWRITE (`assembly=None`),
    with the period-level manifest naming its report keys (bucket keys, prefix included)."""
    end = _month_after(period)
    folder = f"{prefix}/{report}/{period:%Y%m%d}-{end:%Y%m%d}"
    delivery_folder = f"{folder}/{assembly}" if assembly else folder
    suffix = "csv.gz" if compression == "gz" else "csv.zip"
    keys = [f"{delivery_folder}/{report}-{number}.{suffix}" for number in range(1, len(files) + 1)]
    for key, items in zip(keys, files):
        sink.put(key, legacy_csv(items, compression))
    manifest = legacy_manifest(report, period, assembly or "overwrite-" + str(len(keys)), keys, bucket)
    if assembly:
        sink.put(f"{delivery_folder}/{report}-Manifest.json", manifest)
    sink.put(f"{folder}/{report}-Manifest.json", manifest)
    return keys


def cur2_table(items: list[Line], athena: bool = False) -> pa.Table:
    """CUR 2.0 Parquet columns (or, with `athena`, legacy Parquet ones with tag columns)."""
    rows = []
    for line in items:
        row = {
            "bill_payer_account_id": "111122223333",
            "bill_billing_period_start_date": datetime(line.period.year, line.period.month, 1),
            "bill_billing_period_end_date": datetime.combine(_month_after(line.period), datetime.min.time()),
            "line_item_usage_account_id": "111122223333",
            "line_item_line_item_type": line.line_type,
            "line_item_usage_start_date": line.start,
            "line_item_usage_end_date": line.end,
            "line_item_product_code": "AmazonEC2",
            "line_item_usage_type": "USE1-BoxUsage:p5.48xlarge",
            "line_item_resource_id": line.resource_id,
            "line_item_usage_amount": 1.0,
            "line_item_currency_code": "USD",
            "line_item_unblended_cost": float(line.cost),
            "product_region_code": "us-east-1",
            "pricing_term": "OnDemand",
        }
        if athena:
            row["resource_tags_user_training_run"] = line.training_run or None
        else:
            row["bill_payer_account_name"] = "research"
            row["resource_tags"] = [("user_training_run", line.training_run)] if line.training_run else []
        rows.append(row)
    if athena:
        return pa.Table.from_pylist(rows)
    schema = pa.Table.from_pylist([{k: v for k, v in rows[0].items() if k != "resource_tags"}]).schema
    schema = schema.append(pa.field("resource_tags", pa.map_(pa.string(), pa.string())))
    return pa.Table.from_pylist(rows, schema=schema)


def parquet_bytes(table: pa.Table) -> bytes:
    out = io.BytesIO()
    pq.write_table(table, out)
    return out.getvalue()


def write_cur2_delivery(
    sink: Sink,
    prefix: str,
    export: str,
    period: date,
    execution: str,
    files: list[list[Line]],
    *,
    bucket: str = "billing",
    manifest_extra_files: tuple[str, ...] = (),
) -> list[str]:
    """A CUR 2.0 create-new execution: its data files and the period's manifest naming them."""
    partition = f"BILLING_PERIOD={period:%Y-%m}"
    folder = f"{prefix}/{export}/data/{partition}/20261102T000000Z-{execution}"
    keys = [f"{folder}/{export}-{number:05d}.snappy.parquet" for number in range(1, len(files) + 1)]
    for key, items in zip(keys, files):
        sink.put(key, parquet_bytes(cur2_table(items)))
    columns = [{"name": n, "type": "string"} for n in cur2_table(files[0]).column_names]
    sink.put(
        f"{prefix}/{export}/metadata/{partition}/{export}-Manifest.json",
        json.dumps(
            {
                "executionId": execution,
                "exportArn": f"arn:aws:bcm-data-exports:us-east-1:111122223333:export/{export}",
                "columns": columns,
                "dataFiles": [f"s3://{bucket}/{key}" for key in keys + list(manifest_extra_files)],
            }
        ).encode(),
    )
    return keys


def write_athena_delivery(sink: Sink, prefix: str, report: str, period: date, files: list[list[Line]]) -> list[str]:
    """Legacy CUR Parquet for Athena: the month folder overwritten in place."""
    folder = f"{prefix}/{report}/{report}/year={period.year}/month={period.month}"
    keys = [f"{folder}/{report}-{number:05d}.snappy.parquet" for number in range(1, len(files) + 1)]
    for key, items in zip(keys, files):
        sink.put(key, parquet_bytes(cur2_table(items, athena=True)))
    return keys


def write_athena_status(sink: Sink, prefix: str, report: str, status: str) -> None:
    sink.put(
        f"{prefix}/{report}/cost_and_usage_data_status/cost_and_usage_data_status-00001.snappy.parquet",
        parquet_bytes(pa.table({"status": [status]})),
    )


def ingest(config: Path, period: date) -> dg.ExecuteInProcessResult:
    """Materializes the raw loads and `focus_line_items` for one billing period with the given
    config (the graph `runledger run` builds from it)."""
    from pipelines.config import load_config
    from pipelines.definitions import build_asset_graph

    graph = build_asset_graph(load_config(config))
    loads = [asset for asset in graph.partitioned if asset.key.to_user_string() != "cost_allocations"]
    return dg.materialize(
        graph.partitioned,
        selection=[asset.key for asset in loads],
        partition_key=f"{period:%Y-%m}-01",
        resources={"runledger": RunLedgerResource(config_path=str(config))},
    )


def period_totals(warehouse: Path) -> dict[str, tuple[int, Decimal]]:
    """Per billing period: rows and Σ BilledCost in focus_line_items."""

    with reading(warehouse) as conn:
        rows = conn.execute(
            "select strftime(BillingPeriodStart, '%Y-%m'), count(*), sum(BilledCost) "
            "from focus_line_items group by 1 order by 1"
        ).fetchall()
    return {period: (count, billed) for period, count, billed in rows}
