"""The public FOCUS 1.0 sample through the whole nightly job: totals equal the file's own sums,
every column and every tag of the file is kept."""

import csv
import json
from collections import defaultdict
from datetime import datetime
from decimal import ROUND_HALF_EVEN, Decimal
from pathlib import Path

import pytest

from pipelines.nightly import run_nightly
from tests.support import FIXTURES, write_config
from tests.support.lake import lake_of, reading


def as_money(text: str) -> Decimal:
    """The warehouse's money rule: the file's decimal text rounded half to even at 10 places."""
    return Decimal(text).quantize(Decimal("1e-10"), rounding=ROUND_HALF_EVEN)


def file_totals(path: Path) -> dict[str, tuple[int, Decimal, Decimal]]:
    """Per provider: rows, Σ BilledCost and Σ EffectiveCost, read from the CSV text with Decimal."""
    totals: dict[str, list] = defaultdict(lambda: [0, Decimal(0), Decimal(0)])
    with path.open(newline="") as handle:
        for row in csv.DictReader(handle):
            entry = totals[row["ProviderName"]]
            entry[0] += 1
            entry[1] += as_money(row["BilledCost"])
            entry[2] += as_money(row["EffectiveCost"])
    return {provider: tuple(values) for provider, values in totals.items()}


@pytest.fixture(scope="module")
def sample_warehouse(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("focus")
    sample = FIXTURES / "focus_1.0_sample_1000.csv"
    config = write_config(folder, f"sources:\n  - {{name: focus-sample, kind: focus, path: {sample}}}\n")
    run_nightly(config, echo=lambda line: None)
    return config, lake_of(folder)


def test_provider_totals_equal_the_files_own_sums(sample_warehouse: tuple[Path, Path], focus_sample: Path) -> None:
    _, warehouse = sample_warehouse
    with reading(warehouse) as conn:
        loaded = conn.execute(
            "select ProviderName, count(*), sum(BilledCost), sum(EffectiveCost) from focus_line_items group by 1"
        ).fetchall()
        allocated = conn.execute(
            "select ProviderName, count(*), sum(billed_cost), sum(effective_cost) from cost_allocations group by 1"
        ).fetchall()
    expected = file_totals(focus_sample)
    assert {row[0]: row[1:] for row in loaded} == expected
    assert {row[0]: row[1:] for row in allocated} == expected
    assert expected["AWS"][0] == 942 and expected["AWS"][1] > expected["AWS"][2]


def test_money_beyond_ten_decimals_rounds_half_to_even(sample_warehouse: tuple[Path, Path]) -> None:
    _, warehouse = sample_warehouse
    with reading(warehouse) as conn:
        billed = {row[0] for row in conn.execute("select BilledCost from focus_line_items").fetchall()}
    # the file writes 0.00107392473 and -0.00000764078 (11 decimals)
    assert Decimal("0.0010739247") in billed and Decimal("-0.0000076408") in billed


def test_reconciliation_differences_are_zero(sample_warehouse: tuple[Path, Path]) -> None:
    _, warehouse = sample_warehouse
    with reading(warehouse) as conn:
        rows = conn.execute(
            "select billing_period, raw_rows, focus_rows, allocated_rows, billed_raw_focus_diff, "
            "billed_focus_allocated_diff, effective_focus_allocated_diff from reconciliation order by 1"
        ).fetchall()
    assert [(str(r[0]), r[1], r[2], r[3]) for r in rows] == [("2024-09-01", 999, 999, 999), ("2024-10-01", 1, 1, 1)]
    assert all(value == 0 for row in rows for value in row[4:])


def test_nulls_tags_and_keys(sample_warehouse: tuple[Path, Path]) -> None:
    _, warehouse = sample_warehouse
    with reading(warehouse) as conn:
        (blank_or_null_literal,) = conn.execute(
            "select count(*) from focus_line_items where ChargeClass in ('NULL', '') or ResourceId in ('NULL', '')"
        ).fetchone()
        (tagged,) = conn.execute(
            "select count(*) from focus_line_items where Tags['application'] is not null"
        ).fetchone()
        (distinct_keys,) = conn.execute("select count(distinct x_LineItemKey) from focus_line_items").fetchone()
    with open(FIXTURES / "focus_1.0_sample_1000.csv", newline="") as handle:
        tagged_in_file = sum(1 for row in csv.DictReader(handle) if '"application"' in row["Tags"])
    assert blank_or_null_literal == 0
    assert tagged == tagged_in_file > 0
    assert distinct_keys == 1000


def test_a_second_run_changes_nothing(sample_warehouse: tuple[Path, Path]) -> None:
    config, warehouse = sample_warehouse
    snapshot = (
        "select x_LineItemKey, BilledCost, EffectiveCost, x_CostCategory, Tags from focus_line_items "
        "order by x_LineItemKey"
    )
    allocations = "select * from cost_allocations order by x_LineItemKey"
    with reading(warehouse) as conn:
        before = conn.execute(snapshot).fetchall(), conn.execute(allocations).fetchall()
    run_nightly(config, echo=lambda line: None)
    with reading(warehouse) as conn:
        after = conn.execute(snapshot).fetchall(), conn.execute(allocations).fetchall()
        loads = conn.execute(
            "select count(*), count(distinct billing_period) from loads where status = 'loaded'"
        ).fetchone()
    assert after == before
    assert loads == (4, 2)


def file_rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as handle:
        return list(csv.DictReader(handle))


def file_value(text: str, loaded: object) -> object:
    """A CSV field as the warehouse should hold it, read with the standard library: `NULL` and
    blank are NULL; money rounded half to even at 10 places, timestamps as datetimes, text trimmed."""
    if text.strip() in ("NULL", ""):
        return None
    if isinstance(loaded, Decimal):
        return as_money(text)
    if isinstance(loaded, datetime):
        return datetime.fromisoformat(text)
    return text.strip()


def tag_text(value: object) -> str | None:
    """A JSON tag value as its text: a string as it is, a number as written, a boolean true/false."""
    return value if value is None or isinstance(value, str) else json.dumps(value)


def test_totals_per_period_and_provider_equal_the_files_own(
    sample_warehouse: tuple[Path, Path], focus_sample: Path
) -> None:
    expected: dict[tuple[str, str], list] = defaultdict(lambda: [0, Decimal(0), Decimal(0)])
    for row in file_rows(focus_sample):
        entry = expected[(row["BillingPeriodStart"][:7], row["ProviderName"])]
        entry[0] += 1
        entry[1] += as_money(row["BilledCost"])
        entry[2] += as_money(row["EffectiveCost"])
    with reading(sample_warehouse[1]) as conn:
        loaded = conn.execute(
            "select strftime(BillingPeriodStart, '%Y-%m'), ProviderName, count(*), sum(BilledCost), "
            "sum(EffectiveCost) from focus_line_items group by all"
        ).fetchall()
    assert {
        (period, provider): [rows, billed, effective] for period, provider, rows, billed, effective in loaded
    } == expected
    assert sorted(expected) == [
        ("2024-09", "AWS"),
        ("2024-09", "Microsoft"),
        ("2024-09", "Oracle"),
        ("2024-10", "Oracle"),
    ]


def test_every_column_and_tag_of_the_file_is_kept(sample_warehouse: tuple[Path, Path], focus_sample: Path) -> None:
    rows = file_rows(focus_sample)
    header = list(rows[0])
    with reading(sample_warehouse[1]) as conn:
        table = {name for (name,) in conn.execute("select column_name from (describe focus_line_items)").fetchall()}
        focus = [name for name in header if name in table and name != "Tags"]
        cursor = conn.execute(f"select x_ExtraColumns, Tags, {', '.join(focus)} from focus_line_items")
        loaded = {extra["Id"]: (extra, tags, dict(zip(focus, values))) for extra, tags, *values in cursor.fetchall()}
    assert set(header) - table == {"Id"}  # the sample's own column; every FOCUS 1.0 column has its column
    assert len(loaded) == len(rows) == 1000
    for row in rows:
        extra, tags, columns = loaded[row["Id"]]
        assert extra == {"Id": row["Id"]}
        assert columns == {name: file_value(row[name], columns[name]) for name in focus}, row["Id"]
        expected_tags = {} if row["Tags"] == "NULL" else json.loads(row["Tags"])
        assert tags == {key: tag_text(value) for key, value in expected_tags.items()}, row["Id"]


def test_region_name_commitment_category_and_contracted_unit_price_are_carried(
    sample_warehouse: tuple[Path, Path], focus_sample: Path
) -> None:
    rows = file_rows(focus_sample)
    with reading(sample_warehouse[1]) as conn:
        loaded = conn.execute(
            "select count(RegionName), count(distinct RegionName), "
            "count(*) filter (CommitmentDiscountCategory = 'Spend'), sum(ContractedUnitPrice) from focus_line_items"
        ).fetchone()
    regions = [row["RegionName"] for row in rows if row["RegionName"] not in ("NULL", "")]
    spend = sum(1 for row in rows if row["CommitmentDiscountCategory"] == "Spend")
    contracted = sum(
        (as_money(row["ContractedUnitPrice"]) for row in rows if row["ContractedUnitPrice"] not in ("NULL", "")),
        Decimal(0),
    )
    assert loaded == (len(regions), len(set(regions)), spend, contracted)
    assert spend == 4 and len(set(regions)) > 5 and contracted > 0
