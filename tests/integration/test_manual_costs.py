"""A `manual_costs` source of labour and labelling lines (CSV and YAML) beside a FOCUS bill: the
lines are attributed by their dimension columns, show in run_costs, in the budget variance as
fixed lines against a `fixed:` budget and in the reconciliation, which proves them conserved; a
bad line stops the load, naming its file, row and column, and keeps what was loaded."""

import shutil
from decimal import Decimal
from pathlib import Path

import pytest
from click.testing import CliRunner

from pipelines.cli import main
from tests.support import write_config
from tests.support.lake import lake_of, reading
from tests.support.warehouse_state import table_checksums

LABOUR_CSV = """date,cost_category,amount,currency,description,training_run,owner
2026-10-15,labor,20000.00,USD,October salaries (2 FTE),r1,ml-platform
2026-11-15,labor,21000.50,USD,November salaries (2 FTE),r1,ml-platform
2026-10-20,labor,-500.25,USD,October salaries: overtime reversed,r1,ml-platform
2026-10-31,tooling,300,USD,experiment tracker seats,r1,
2026-10-31,tooling,120.10,USD,issue tracker (all teams),,
"""
LABELLING_YAML = """# labelling invoices
- date: 2026-10-05
  cost_category: data_labeling
  amount: 7500.1234567891
  currency: USD
  description: preference pairs, batch 1
  training_run: r1
  dataset_version: prefs-v1
- {date: 2026-11-02, cost_category: data_labeling, amount: 4500, currency: USD, training_run: r1}
"""
FOCUS_CSV = (
    "BillingCurrency,BillingPeriodStart,ChargePeriodStart,ChargePeriodEnd,ProviderName,ChargeCategory,ServiceName,"
    "BilledCost,EffectiveCost,Tags\n"
    "USD,2026-10-01 00:00:00,2026-10-02 00:00:00,2026-10-03 00:00:00,Amazon Web Services,Usage,AmazonVPC,"
    '12.50,12.50,"{""training_run"": ""r1""}"\n'
)
BUDGET = """training_run: r1
currency: USD
window: {start: 2026-10-01, end: 2026-12-01}
network: {egress_gb: 1000, price_gb: 0.02}
fixed: {labor: 50000, data_labeling: 12000}
thresholds: {warning: 0.8, over: 1.0}
"""
CONFIG = """sources:
  - {name: finance, kind: manual_costs, path: costs}
  - {name: cloud, kind: focus, path: exports}
budgets: budgets
"""


def invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.output


@pytest.fixture(scope="module")
def loaded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A project with the manual cost files, a FOCUS bill and r1's budget, run once."""
    root = tmp_path_factory.mktemp("manual")
    for folder in ("costs", "exports", "budgets"):
        (root / folder).mkdir()
    (root / "costs" / "labour.csv").write_text(LABOUR_CSV)
    (root / "costs" / "labelling.yaml").write_text(LABELLING_YAML)
    (root / "exports" / "bill.csv").write_text(FOCUS_CSV)
    (root / "budgets" / "r1.yaml").write_text(BUDGET)
    code, output = invoke("run", "--config", str(write_config(root, CONFIG)))
    assert code == 0, output
    return root


@pytest.fixture
def site(loaded: Path, tmp_path: Path) -> Path:
    """A private copy of the loaded project."""
    shutil.copytree(loaded, tmp_path / "site")
    return tmp_path / "site"


def test_manual_lines_are_costs_of_their_run_category_and_month(loaded: Path) -> None:
    with reading(loaded) as conn:
        costs = conn.execute(
            "select training_run, cost_category, billing_period, effective_cost from run_costs "
            "order by training_run nulls last, cost_category, billing_period"
        ).fetchall()
        lines = conn.execute(
            "select ChargeCategory, ProviderName, InvoiceIssuerName, ServiceName, ChargeDescription, "
            "ChargePeriodStart, ChargePeriodEnd, BilledCost, EffectiveCost, Tags from focus_line_items "
            "where x_SourceName = 'finance' and x_SourceFile like '%labelling.yaml' order by ChargePeriodStart"
        ).fetchall()
    r1 = [(category, f"{period:%Y-%m}", cost) for run, category, period, cost in costs if run == "r1"]
    assert r1 == [
        ("data_labeling", "2026-10", Decimal("7500.1234567891")),
        ("data_labeling", "2026-11", Decimal("4500")),
        ("labor", "2026-10", Decimal("19499.75")),
        ("labor", "2026-11", Decimal("21000.50")),
        ("network", "2026-10", Decimal("12.50")),
        ("tooling", "2026-10", Decimal("300")),
    ]
    assert [f"{line[5]:%Y-%m-%d %H:%M}/{line[6]:%Y-%m-%d %H:%M}" for line in lines] == [
        "2026-10-05 00:00/2026-10-06 00:00",
        "2026-11-02 00:00/2026-11-03 00:00",
    ]
    assert lines[0][:5] == ("Usage", "finance", "finance", "data_labeling", "preference pairs, batch 1")
    assert lines[0][7:] == (
        Decimal("7500.1234567891"),
        Decimal("7500.1234567891"),
        {"training_run": "r1", "dataset_version": "prefs-v1"},
    )


def test_a_negative_line_is_an_adjustment_and_a_line_without_run_is_unattributed(loaded: Path) -> None:
    with reading(loaded) as conn:
        adjustment = conn.execute(
            "select ChargeCategory, BilledCost from focus_line_items where ChargeDescription like '%reversed'"
        ).fetchall()
        unattributed = conn.execute(
            "select x_CostCategory, effective_cost from cost_allocations "
            "where allocation_method = 'unattributed' and x_SourceName = 'finance'"
        ).fetchall()
    assert adjustment == [("Adjustment", Decimal("-500.25"))]
    assert unattributed == [("tooling", Decimal("120.10"))]


def test_the_variance_shows_manual_lines_as_fixed_against_the_fixed_budget(loaded: Path) -> None:
    with reading(loaded) as conn:
        baselines = conn.execute(
            "select cost_category, cost_behavior, estimated_cost from budget_baselines order by cost_category"
        ).fetchall()
        variance = conn.execute(
            "select cost_category, cost_behavior, estimated_cost, actual_cost, variance from budget_variance "
            "order by cost_category"
        ).fetchall()
    assert baselines == [
        ("data_labeling", "fixed", Decimal(12000)),
        ("labor", "fixed", Decimal(50000)),
        ("network", "elastic", Decimal(20)),
    ]
    assert variance == [
        ("data_labeling", "fixed", Decimal(12000), Decimal("12000.1234567891"), Decimal("0.1234567891")),
        ("labor", "fixed", Decimal(50000), Decimal("40500.25"), Decimal("-9499.75")),
        ("network", "elastic", Decimal(20), Decimal("12.50"), Decimal("-7.50")),
        # spend of a category the budget does not plan: fixed, as the category is not derived from the run's size
        ("tooling", "fixed", Decimal(0), Decimal(300), Decimal(300)),
        ("total", None, Decimal(62020), Decimal("52812.8734567891"), Decimal("-9207.1265432109")),
    ]


def test_the_reconciliation_proves_the_manual_lines_conserved(loaded: Path) -> None:
    with reading(loaded) as conn:
        rows = conn.execute(
            "select source_name, billing_period, raw_rows, raw_billed_cost, allocated_effective_cost, "
            "billed_raw_focus_diff, billed_focus_allocated_diff, effective_focus_allocated_diff "
            "from reconciliation order by source_name, billing_period"
        ).fetchall()
    assert [(source, f"{period:%Y-%m}", *rest) for source, period, *rest in rows] == [
        ("cloud", "2026-10", 1, Decimal("12.50"), Decimal("12.50"), 0, 0, 0),
        ("finance", "2026-10", 5, Decimal("27419.9734567891"), Decimal("27419.9734567891"), 0, 0, 0),
        ("finance", "2026-11", 2, Decimal("25500.50"), Decimal("25500.50"), 0, 0, 0),
    ]


BAD_LINES = [
    (
        "2026-10-15,labor,20000.00,USD,salaries,r1,\n2026-10-16,labour,10,USD,salaries,r1,\n",
        "row 2, column cost_category: 'labour' is not a cost category; use one of compute",
    ),
    ('2026-10-15,labor,"20,000.00",USD,salaries,r1,\n', "row 1, column amount: '20,000.00' is not a decimal number"),
    ("2026-10-15,labor,$200,USD,salaries,r1,\n", "row 1, column amount: '$200' is not a decimal number"),
    ("15/10/2026,labor,200,USD,salaries,r1,\n", "row 1, column date: '15/10/2026' is not a date YYYY-MM-DD"),
    ("2026-02-30,labor,200,USD,salaries,r1,\n", "row 1, column date: '2026-02-30' is not a date YYYY-MM-DD"),
    ("2026-10-15,labor,200,XYZ,salaries,r1,\n", "row 1, column currency: 'XYZ' must be a 3-letter ISO 4217 code"),
    ("2026-10-15,labor,200,usd,salaries,r1,\n", "row 1, column currency: 'usd' must be a 3-letter ISO 4217 code"),
    # amounts DECIMAL(38, 10) holds but sums, shares and exact divisions would not: refused before the load
    (
        "2026-10-15,labor,200,USD,salaries,r1,\n2026-10-16,labor,999999999999999999.9999999999,USD,salaries,r1,\n",
        (
            "row 2, column amount: '999999999999999999.9999999999' is not an amount RunLedger loads: at most 10 "
            "decimal places, below 10^15"
        ),
    ),
    (
        "2026-10-15,labor,9999999999999999999999999999,USD,a,r1,\n2026-10-16,labor,1,USD,b,r1,\n",
        "row 1, column amount: '9999999999999999999999999999' is not an amount RunLedger loads",
    ),
]


@pytest.mark.parametrize(("body", "message"), BAD_LINES)
def test_a_bad_line_stops_the_load_naming_file_row_and_column(site: Path, body: str, message: str) -> None:
    labour = site / "costs" / "labour.csv"
    labour.write_text(LABOUR_CSV.splitlines()[0] + "\n" + body)
    before = table_checksums(lake_of(site))
    code, output = invoke("run", "--config", str(site / "runledger.yaml"))
    assert code == 1, output
    assert f"{labour}, {message}" in output
    assert table_checksums(lake_of(site)) == before


def test_a_missing_column_stops_the_load(site: Path) -> None:
    labelling = site / "costs" / "labelling.yaml"
    labelling.write_text(LABELLING_YAML.replace("  currency: USD\n", ""))
    before = table_checksums(lake_of(site))
    code, output = invoke("run", "--config", str(site / "runledger.yaml"))
    assert code == 1, output
    assert f"{labelling}, row 1, column currency: no value; fix the file, nothing was loaded" in output
    labelling.write_text(LABELLING_YAML)
    (site / "costs" / "labour.csv").write_text(LABOUR_CSV.replace(",currency,", ",curency,"))
    code, output = invoke("run", "--config", str(site / "runledger.yaml"))
    assert code == 1, output
    assert "labour.csv: manual cost columns missing: currency" in output
    assert table_checksums(lake_of(site)) == before


def test_check_counts_the_manual_lines_and_refuses_a_bad_one(site: Path) -> None:
    config = str(site / "runledger.yaml")
    code, output = invoke("check", "--config", config)
    assert code == 0, output
    assert "0 run events in files, 7 manual cost lines" in output
    labour = site / "costs" / "labour.csv"
    labour.write_text(LABOUR_CSV.replace("2026-11-15,labor", "2026-11-15,salaries"))
    code, output = invoke("check", "--config", config)
    assert code == 1, output
    assert f"{labour}, row 2, column cost_category: 'salaries' is not a cost category" in output
