"""`runledger query`'s formats write money as plain decimal text: exact, never an exponent (`0E-10`),
the column's decimals in CSV and JSON (JSON strings), aligned on the decimal point in a table."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from pipelines.cli import main
from tests.support.lake import writing

AMOUNTS = {
    "zero": "0",
    "negative": "-1234.5",
    "tiny": "0.0000000001",
    "huge": "12345678901234567890.1234567890",
}
AS_TEXT = {
    "zero": "0.0000000000",
    "negative": "-1234.5000000000",
    "tiny": "0.0000000001",
    "huge": "12345678901234567890.1234567890",
}
ORDERED = "select x_LineItemKey as line, BilledCost as cost from focus_line_items order by BilledCost"


@pytest.fixture
def config(tmp_path: Path) -> str:
    (tmp_path / "runledger.yaml").write_text("warehouse: lake\n")
    with writing(tmp_path) as conn:
        for key, amount in AMOUNTS.items():
            conn.execute(
                "insert into focus_line_items (x_LineItemKey, x_SourceName, x_SourceFormat, x_SourceFile, "
                "x_IngestedAt, x_CostCategory, x_GpuHours, BillingPeriodStart, BilledCost, x_Credits) values "
                "($key, 'gcp-main', 'gcp_billing', 'f', now(), 'compute', 0, timestamp '2026-11-01', "
                "$amount::decimal(38, 10), map {'CommittedUseDiscount': $amount::decimal(38, 10)})",
                {"key": key, "amount": amount},
            )
    return str(tmp_path / "runledger.yaml")


def query(config: str, sql: str, output_format: str = "table") -> str:
    result = CliRunner().invoke(main, ["query", "--config", config, "--format", output_format, sql])
    assert result.exit_code == 0, result.output
    return result.output


def test_csv_writes_every_decimal_of_the_column_exactly(config: str) -> None:
    sql = "select x_LineItemKey as line, BilledCost as cost, x_Credits from focus_line_items order by cost"
    rows = list(csv.reader(io.StringIO(query(config, sql, "csv"))))
    assert rows[0] == ["line", "cost", "x_Credits"]
    assert [(line, cost) for line, cost, _ in rows[1:]] == [
        (key, AS_TEXT[key]) for key in ("negative", "zero", "tiny", "huge")
    ]
    credits = {line: json.loads(text) for line, _, text in rows[1:]}
    assert credits["zero"] == {"CommittedUseDiscount": "0.0000000000"}
    assert credits["huge"] == {"CommittedUseDiscount": AS_TEXT["huge"]}


def test_json_writes_decimals_as_strings_of_the_exact_amount_and_integers_as_numbers(config: str) -> None:
    sql = (
        "select x_LineItemKey as line, BilledCost as cost, 7 as n, sum(BilledCost) over () as total "
        "from focus_line_items order by cost"
    )
    rows = json.loads(query(config, sql, "json"))
    # -1234.5 + 0 + 0.0000000001 + 12345678901234567890.1234567890, to the last decimal
    assert rows == [
        {"line": key, "cost": AS_TEXT[key], "n": 7, "total": "12345678901234566655.6234567891"}
        for key in ("negative", "zero", "tiny", "huge")
    ]


def test_a_table_aligns_a_column_on_its_decimal_point_and_rounds_nothing(config: str) -> None:
    assert query(config, ORDERED).splitlines() == [
        "line                                       cost",
        "--------  -------------------------------------",
        "negative                      -1,234.5000000000",
        "zero                               0.0000000000",
        "tiny                               0.0000000001",
        "huge      12,345,678,901,234,567,890.1234567890",
    ]
    # a column whose amounts need no more than cents shows cents
    cents = "select x_LineItemKey as line, BilledCost as cost from focus_line_items where BilledCost <= 0 order by cost"
    assert query(config, cents).splitlines()[2:] == [
        "negative  -1,234.50",
        "zero           0.00",
    ]
