"""The public legacy CUR CSV sample, laid out as a CUR delivery in a local folder, loads with the
file's own totals; legacy layouts and their column names map onto the CUR 2.0 logic."""

import csv
import gzip
import json
import zipfile
from collections import Counter
from datetime import date
from decimal import Decimal
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from connectors.errors import SourceError
from pipelines.nightly import run_nightly
from pipelines.sources.aws_cur.legacy_cur import parquet_column_name, scan_legacy
from tests.integration.test_focus_sample import as_money
from tests.support import FIXTURES, write_config
from tests.support.cur_exports import FolderSink, cur2_table, ingest, lines, period_totals, total, write_legacy_delivery
from tests.support.lake import reading

SAMPLE = FIXTURES / "aws_legacy_cur_csv_anonymous_2023-11.csv"
REPORT = "sample-report"
ASSEMBLY = "5f3c2b1a-0d9e-4c8b-a7f6-e5d4c3b2a190"


def lay_out_sample(root: Path, compression: str) -> Path:
    """The sample as a CREATE_NEW delivery of 2023-11 under `root/cur/<report>/`."""
    folder = root / "cur" / REPORT / "20231101-20231201"
    (folder / ASSEMBLY).mkdir(parents=True)
    raw = SAMPLE.read_bytes()
    if compression == "gz":
        name = f"{REPORT}-00001.csv.gz"
        (folder / ASSEMBLY / name).write_bytes(gzip.compress(raw, mtime=0))
    else:
        name = f"{REPORT}-00001.csv.zip"
        with zipfile.ZipFile(folder / ASSEMBLY / name, "w") as archive:
            archive.writestr(f"{REPORT}-00001.csv", raw)
    with SAMPLE.open(newline="") as handle:
        headers = next(csv.reader(handle))
    (folder / f"{REPORT}-Manifest.json").write_text(
        json.dumps(
            {
                "assemblyId": ASSEMBLY,
                "columns": [{"category": h.split("/")[0], "name": h.split("/")[1], "type": "String"} for h in headers],
                "reportKeys": [f"exports/cur/{REPORT}/20231101-20231201/{ASSEMBLY}/{name}"],
                "billingPeriod": {"start": "20231101T000000.000Z", "end": "20231201T000000.000Z"},
            }
        )
    )
    return write_config(root, f"sources:\n  - {{name: aws-legacy, kind: aws_cur, uri: cur/{REPORT}}}\n")


def sample_rows() -> list[dict]:
    with SAMPLE.open(newline="") as handle:
        return list(csv.DictReader(handle))


def test_the_public_sample_loads_with_the_files_own_totals(tmp_path: Path) -> None:
    rows = sample_rows()
    run_nightly(lay_out_sample(tmp_path, "gz"), echo=lambda line: None)
    expected_billed = sum((as_money(r["lineItem/UnblendedCost"]) for r in rows), Decimal(0))
    with reading(tmp_path) as conn:
        loaded = conn.execute(
            "select x_SourceFormat, count(*), count(distinct x_LineItemKey), sum(BilledCost), sum(EffectiveCost), "
            "sum(ListCost) from focus_line_items group by 1"
        ).fetchall()
        categories = dict(conn.execute("select ChargeCategory, count(*) from focus_line_items group by 1").fetchall())
        regions = dict(conn.execute("select RegionId, count(*) from focus_line_items group by 1").fetchall())
        diffs = conn.execute(
            "select raw_rows, rows_raw_focus_diff, billed_raw_focus_diff, billed_focus_allocated_diff, "
            "effective_focus_allocated_diff from reconciliation"
        ).fetchall()
    expected_list = sum((as_money(r["pricing/publicOnDemandCost"]) for r in rows), Decimal(0))
    assert expected_billed == Decimal("1.6823086974")
    assert loaded == [("aws_legacy_csv", 1281, 1281, expected_billed, expected_billed, expected_list)]
    assert categories == {"Usage": 1269, "Tax": 12}
    assert regions == {
        k or None: v for k, v in Counter(r["product/regionCode"] or r["product/region"] for r in rows).items()
    }
    assert diffs == [(1281, 0, 0, 0, 0)]


def test_the_sample_zipped_loads_the_same_totals(tmp_path: Path) -> None:
    ingest(lay_out_sample(tmp_path, "zip"), date(2023, 11, 1))
    expected = sum((as_money(r["lineItem/UnblendedCost"]) for r in sample_rows()), Decimal(0))
    assert period_totals(tmp_path) == {"2023-11": (1281, expected)}


@pytest.mark.parametrize(
    ("csv_name", "parquet_name"),
    [
        ("lineItem/UnblendedCost", "line_item_unblended_cost"),
        ("reservation/ReservationARN", "reservation_reservation_a_r_n"),
        ("resourceTags/user:Cost Center", "resource_tags_user_cost_center"),
        ("savingsPlan/SavingsPlanEffectiveCost", "savings_plan_savings_plan_effective_cost"),
        ("bill/PayerAccountId", "bill_payer_account_id"),
        ("product/regionCode", "product_region_code"),
    ],
)
def test_csv_headers_become_their_parquet_names(csv_name: str, parquet_name: str) -> None:
    assert parquet_column_name(csv_name) == parquet_name


def test_colliding_tag_keys_are_reported_and_kept_apart(tmp_path: Path) -> None:
    folder = tmp_path / "cur" / "r" / "20261001-20261101"
    folder.mkdir(parents=True)
    (folder / "r-1.csv").write_text(
        "bill/PayerAccountId,bill/BillingPeriodStartDate,lineItem/LineItemType,lineItem/UnblendedCost,"
        "lineItem/UsageStartDate,lineItem/UsageEndDate,lineItem/CurrencyCode,lineItem/UsageAccountId,"
        "resourceTags/user:Cost Center,resourceTags/user:cost-center\n"
        "1,2026-10-01T00:00:00Z,Usage,1.25,2026-10-02T00:00:00Z,2026-10-02T01:00:00Z,USD,1,research,platform\n"
    )
    (folder / "r-Manifest.json").write_text(
        json.dumps({"assemblyId": "a1", "reportKeys": ["p/r/20261001-20261101/r-1.csv"]})
    )
    config = write_config(tmp_path, "sources:\n  - {name: aws, kind: aws_cur, uri: cur/r}\n")
    assert scan_legacy([folder / "r-1.csv"], "legacy_csv").warnings == (
        (
            "tag keys user:Cost Center, user:cost-center collide after snake-casing (user_cost_center); "
            "each is kept as written in Tags, none merged"
        ),
    )
    ingest(config, date(2026, 10, 1))
    with reading(tmp_path) as conn:
        tags = conn.execute("select Tags from focus_line_items").fetchone()[0]
    assert tags == {"user:Cost Center": "research", "user:cost-center": "platform"}


def test_overwrite_mode_in_a_local_folder_replaces_the_period(tmp_path: Path) -> None:
    sink = FolderSink(tmp_path / "exports")
    period = date(2026, 10, 1)
    first = lines(period, "a", ["1.10", "2.20", "3.30"])
    write_legacy_delivery(sink, "cur", "r", period, None, [first])
    config = write_config(tmp_path, "sources:\n  - {name: aws, kind: aws_cur, uri: exports/cur/r}\n")
    ingest(config, period)
    assert period_totals(tmp_path) == {"2026-10": (3, total(first))}
    second = lines(period, "b", ["10.01", "20.02"])
    write_legacy_delivery(sink, "cur", "r", period, None, [second])
    ingest(config, period)
    assert period_totals(tmp_path) == {"2026-10": (2, total(second))}
    with reading(tmp_path) as conn:
        # Two p5.48xlarge instance-hours (8 GPUs each), from the legacy product/instanceType column.
        assert conn.execute("select sum(x_GpuHours), any_value(x_InstanceType) from focus_line_items").fetchone() == (
            Decimal(16),
            "p5.48xlarge",
        )


def test_a_legacy_manifest_listing_parquet_report_files(tmp_path: Path) -> None:
    period = date(2026, 10, 1)
    first, second = lines(period, "p", ["0.5", "1.25"], training_run="llm-7b-pt-r1"), lines(period, "q", ["2"])
    folder = tmp_path / "cur" / "pq" / "20261001-20261101"
    keys = []
    for number, items in enumerate((first, second), start=1):
        key = f"20261001-20261101/asm-1/pq-{number}.snappy.parquet"
        (tmp_path / "cur" / "pq" / key).parent.mkdir(parents=True, exist_ok=True)
        pq.write_table(cur2_table(items, athena=True), tmp_path / "cur" / "pq" / key)
        keys.append(f"billing/cur/pq/{key}")
    (folder / "pq-Manifest.json").write_text(json.dumps({"assemblyId": "asm-1", "reportKeys": keys}))
    ingest(write_config(tmp_path, "sources:\n  - {name: aws, kind: aws_cur, uri: cur/pq}\n"), period)
    assert period_totals(tmp_path) == {"2026-10": (3, total(first + second))}
    with reading(tmp_path) as conn:
        formats = conn.execute(
            "select x_SourceFormat, count(*) filter (where Tags['user_training_run'] = 'llm-7b-pt-r1') "
            "from focus_line_items group by 1"
        ).fetchall()
    assert formats == [("aws_legacy_parquet", 2)]


def test_a_truncated_gzip_fails_naming_the_file_and_keeps_the_loaded_period(tmp_path: Path) -> None:
    sink = FolderSink(tmp_path / "exports")
    period = date(2026, 10, 1)
    good = lines(period, "g", ["9.99", "0.01"])
    write_legacy_delivery(sink, "cur", "r", period, "asm-1", [good])
    config = write_config(tmp_path, "sources:\n  - {name: aws, kind: aws_cur, uri: exports/cur/r}\n")
    ingest(config, period)

    keys = write_legacy_delivery(sink, "cur", "r", period, "asm-2", [lines(period, "h", ["5"] * 28)])
    truncated = tmp_path / "exports" / keys[0]
    truncated.write_bytes(truncated.read_bytes()[:60])
    with pytest.raises(SourceError, match=rf"{truncated}: cannot decompress"):
        ingest(config, period)
    assert period_totals(tmp_path) == {"2026-10": (2, total(good))}


@pytest.mark.parametrize(
    ("start", "cost", "expected"),
    [
        ("yesterday", "1.25", r"column 'line_item_usage_start_date' .*\[\"yesterday\"\]"),
        (
            "2026-10-02T00:00:00Z",
            "1,25",
            r"row 1, column line_item_unblended_cost: '1,25' is not a finite number below 10\^15",
        ),
    ],
)
def test_a_bad_value_names_the_file_column_and_value(tmp_path: Path, start: str, cost: str, expected: str) -> None:
    folder = tmp_path / "cur" / "r" / "20261001-20261101"
    folder.mkdir(parents=True)
    (folder / "r-1.csv").write_text(
        "bill/PayerAccountId,bill/BillingPeriodStartDate,lineItem/LineItemType,lineItem/UnblendedCost,"
        "lineItem/UsageStartDate,lineItem/UsageEndDate,lineItem/CurrencyCode,lineItem/UsageAccountId\n"
        f'1,2026-10-01T00:00:00Z,Usage,"{cost}",{start},2026-10-02T01:00:00Z,USD,1\n'
    )
    (folder / "r-Manifest.json").write_text(
        json.dumps({"assemblyId": "a1", "reportKeys": ["p/r/20261001-20261101/r-1.csv"]})
    )
    config = write_config(tmp_path, "sources:\n  - {name: aws, kind: aws_cur, uri: cur/r}\n")
    with pytest.raises(SourceError, match=rf"{folder / 'r-1.csv'}[:,] .*{expected}"):
        ingest(config, date(2026, 10, 1))
