"""An AWS FOCUS export (Data Exports layout, Parquet) built from the real FOCUS sample's AWS rows."""

import csv
import json
from datetime import datetime
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pipelines.ingest.load import LoadError
from pipelines.nightly import run_nightly
from tests.integration.test_focus_sample import as_money
from tests.support import write_config
from tests.support.lake import reading

MONEY_COLUMNS = ("BilledCost", "EffectiveCost", "ListCost", "ContractedCost", "PricingQuantity", "ConsumedQuantity")
TIME_COLUMNS = ("BillingPeriodStart", "BillingPeriodEnd", "ChargePeriodStart", "ChargePeriodEnd")


def typed_rows(rows: list[dict]) -> pa.Table:
    """The sample's text rows typed as AWS writes its FOCUS Parquet: doubles, timestamps, a Tags map."""
    columns: dict[str, list] = {name: [] for name in rows[0]}
    for row in rows:
        for name, text in row.items():
            value = None if text in ("NULL", "") else text
            if value is not None and name in MONEY_COLUMNS:
                value = float(value)
            elif value is not None and name in TIME_COLUMNS:
                value = datetime.fromisoformat(value)
            elif name == "Tags":
                value = list(json.loads(value).items()) if value else []
            columns[name].append(value)
    fields = [
        pa.field(
            n,
            pa.float64()
            if n in MONEY_COLUMNS
            else pa.timestamp("us")
            if n in TIME_COLUMNS
            else pa.map_(pa.string(), pa.string())
            if n == "Tags"
            else pa.string(),
        )
        for n in columns
    ]
    return pa.table({f.name: pa.array(columns[f.name], type=f.type) for f in fields})


def write_export(root: Path, rows: list[dict]) -> Path:
    export = root / "focus-export"
    data = export / "data" / "BILLING_PERIOD=2024-09" / "20241002T031500Z-4e1c"
    data.mkdir(parents=True)
    pq.write_table(typed_rows(rows), data / "focus-export-00001.snappy.parquet")
    metadata = export / "metadata" / "BILLING_PERIOD=2024-09"
    metadata.mkdir(parents=True)
    (metadata / "focus-export-Manifest.json").write_text(
        json.dumps(
            {
                "executionId": "4e1c",
                "exportArn": "arn:aws:bcm-data-exports:us-east-1:123456789012:export/focus-export-1",
                "columns": [{"name": name, "type": "string"} for name in rows[0]],
                "dataFiles": [
                    "s3://bucket/exports/focus-export/data/BILLING_PERIOD=2024-09/20241002T031500Z-4e1c/focus-export-00001.snappy.parquet"
                ],
            }
        )
    )
    return write_config(root, "sources:\n  - {name: aws-focus, kind: aws_cur, uri: focus-export}\n")


@pytest.fixture
def sample_rows(focus_sample: Path) -> list[dict]:
    with focus_sample.open(newline="") as handle:
        return list(csv.DictReader(handle))


def test_aws_focus_export_loads_with_the_files_own_totals(tmp_path: Path, sample_rows: list[dict]) -> None:
    aws = [row for row in sample_rows if row["ProviderName"] == "AWS"]
    run_nightly(write_export(tmp_path, aws), echo=lambda line: None)
    with reading(tmp_path) as conn:
        loaded = conn.execute(
            "select x_SourceFormat, count(*), sum(BilledCost), sum(EffectiveCost), "
            "count(*) filter (where cardinality(Tags) > 0) from focus_line_items group by 1"
        ).fetchall()
        diffs = conn.execute(
            "select billed_raw_focus_diff, effective_focus_allocated_diff from reconciliation"
        ).fetchall()
    expected_billed = sum((as_money(r["BilledCost"]) for r in aws), Decimal(0))
    expected_effective = sum((as_money(r["EffectiveCost"]) for r in aws), Decimal(0))
    tagged = sum(1 for r in aws if r["Tags"] not in ("NULL", "", "{}"))
    assert loaded == [("aws_focus", 942, expected_billed, expected_effective, tagged)]
    assert diffs == [(0, 0)]


def test_a_row_of_another_period_fails_the_load_and_loads_nothing(tmp_path: Path, sample_rows: list[dict]) -> None:
    stray = [row for row in sample_rows if row["BillingPeriodStart"].startswith("2024-10")]
    rows = [row for row in sample_rows if row["ProviderName"] == "AWS"] + stray
    config = write_export(tmp_path, rows)
    with pytest.raises(LoadError, match="billing period 2024-09: 1 rows belong to another billing period"):
        run_nightly(config, echo=lambda line: None)
    with reading(tmp_path) as conn:
        assert conn.execute("select count(*) from focus_line_items").fetchone() == (0,)
        assert conn.execute("select status from loads").fetchall() == [("failed",)]
