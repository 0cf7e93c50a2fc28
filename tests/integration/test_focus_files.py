"""A `focus` source of CSV and Parquet files with FOCUS 1.2 columns of any Parquet type and x_
columns of their own: every column is kept, typed, and files of different types load together."""

import csv
import json
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from pipelines.nightly import run_nightly
from tests.support import write_config
from tests.support.lake import reading

BASE = {
    "BillingCurrency": "USD",
    "BillingPeriodStart": "2024-09-01 00:00:00",
    "ChargePeriodStart": "2024-09-02 00:00:00",
    "ProviderName": "AWS",
    "ChargeCategory": "Usage",
}


def write_csv(path: Path) -> None:
    rows = [
        {
            **BASE,
            "BilledCost": "1.25",
            "EffectiveCost": "1.0",
            "ContractedUnitPrice": "0.085",
            "SkuPriceDetails": '{"InstanceType": "p5.48xlarge", "x_Tenancy": "Shared"}',
            "x_Operation": "RunInstances",
            "Tags": '{"training_run": "r1"}',
        },
        {
            **BASE,
            "BilledCost": "2",
            "EffectiveCost": "2",
            "ContractedUnitPrice": "NULL",
            "SkuPriceDetails": "NULL",
            "x_Operation": "NULL",
            "Tags": "NULL",
        },
    ]
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def write_parquet(path: Path) -> None:
    """As AWS writes its FOCUS Parquet: doubles, timestamps, maps for Tags, SkuPriceDetails and x_Discounts."""
    table = pa.table(
        {
            "BilledCost": pa.array([0.1, 0.2]),
            "EffectiveCost": pa.array([0.1, 0.2]),
            "BillingCurrency": ["USD", "USD"],
            "BillingPeriodStart": pa.array([BASE["BillingPeriodStart"]] * 2).cast(pa.timestamp("us")),
            "ChargePeriodStart": pa.array([BASE["ChargePeriodStart"]] * 2).cast(pa.timestamp("us")),
            "ProviderName": ["AWS", "AWS"],
            "ChargeCategory": ["Usage", "Usage"],
            "ContractedUnitPrice": pa.array([0.085, None]),
            "CommitmentDiscountQuantity": pa.array([1.5, None]),
            "SkuPriceDetails": pa.array([[("InstanceType", "p5.48xlarge")], None], pa.map_(pa.string(), pa.string())),
            "x_Discounts": pa.array([[("SavingsPlanNegation", -0.05)], None], pa.map_(pa.string(), pa.float64())),
            "x_ServiceCode": ["AmazonEC2", None],
            "Tags": pa.array([[("training_run", "r2")], []], pa.map_(pa.string(), pa.string())),
        }
    )
    pq.write_table(table, path)


def test_csv_and_parquet_files_keep_every_column(tmp_path: Path) -> None:
    exports = tmp_path / "exports"
    exports.mkdir()
    write_csv(exports / "a.csv")
    write_parquet(exports / "b.parquet")
    run_nightly(
        write_config(tmp_path, "sources:\n  - {name: files, kind: focus, path: exports}\n"), echo=lambda line: None
    )
    with reading(tmp_path) as conn:
        rows = conn.execute(
            "select BilledCost, ContractedUnitPrice, CommitmentDiscountQuantity, SkuPriceDetails, x_ExtraColumns, Tags "
            "from focus_line_items order by x_SourceFile, x_LineItemKey"
        ).fetchall()
        diffs = conn.execute("select billed_raw_focus_diff, billed_focus_allocated_diff from reconciliation").fetchall()
    assert rows == [
        (
            Decimal("1.25"),
            Decimal("0.085"),
            None,
            '{"InstanceType": "p5.48xlarge", "x_Tenancy": "Shared"}',
            {"x_Operation": "RunInstances"},
            {"training_run": "r1"},
        ),
        (Decimal(2), None, None, None, {"x_Operation": None}, {}),
        (
            Decimal("0.1"),
            Decimal("0.085"),
            Decimal("1.5"),
            '{"InstanceType":"p5.48xlarge"}',
            {"x_Discounts": '{"SavingsPlanNegation":-0.05}', "x_ServiceCode": "AmazonEC2"},
            {"training_run": "r2"},
        ),
        (Decimal("0.2"), None, None, None, {"x_Discounts": None, "x_ServiceCode": None}, {}),
    ]
    assert json.loads(rows[2][4]["x_Discounts"]) == {"SavingsPlanNegation": -0.05}
    assert diffs == [(0, 0)]
