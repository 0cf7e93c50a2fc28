"""Commitments on the demo: the utilization of its Savings Plan, Reserved Instances and committed
use discount against a hand computation from the demo's story, and the unused reservation charged
back to the run it was bought for (`attribution.commitments`), off by default."""

from datetime import datetime
from decimal import Decimal
from pathlib import Path

import pytest
import yaml

from pipelines.demo.aws.catalog import (
    P5,
    RESERVATION_ARN,
    RESERVATION_RECURRING_HOURLY,
    RESERVATION_UPFRONT_HOURLY,
    RESERVED_INSTANCES,
    SAVINGS_PLAN_ARN,
    SAVINGS_PLAN_COVERED_NODES,
    SAVINGS_PLAN_P5_HOURLY,
    SAVINGS_PLAN_TERM_END,
)
from pipelines.demo.periods import HOUR
from pipelines.demo.story.llm_7b import RUN_7B_END, RUN_7B_NODES, RUN_7B_START
from pipelines.demo.story.llm_13b import RUN_13B, RUN_13B_END, RUN_13B_NODES, RUN_13B_START
from pipelines.nightly import run_nightly
from tests.support.demo_lake import SharedDemo, copy_demo
from tests.support.lake import lake_of, reading

OCTOBER, NOVEMBER, DECEMBER = datetime(2026, 10, 1), datetime(2026, 11, 1), datetime(2026, 12, 1)
RULE = {
    "name": "p4d-reservation",
    "commitment": "arn:aws:ec2:*:reserved-instances/*",
    "split": "fixed",
    "weights": {RUN_13B: 1},
}
TABLES = {
    "run_costs": "select * exclude (custom_dimensions) from run_costs order by all",
    "budget_variance": "select * from budget_variance order by training_run, cost_category",
    "cost_allocations": "select * from cost_allocations order by all",
    "totals": "select training_run, estimated_cost, actual_cost, variance, round(variance_pct * 100, 1), status "
    "from budget_variance where cost_category = 'total' order by training_run",
    "commitment_utilization": "select * from commitment_utilization order by all",
}


def hours(start: datetime, end: datetime) -> Decimal:
    return Decimal((end - start) / HOUR)


def money(value: float) -> Decimal:
    return Decimal(str(value))


def query(root: Path, sql: str, params: dict | None = None) -> list[tuple]:
    with reading(lake_of(root)) as conn:
        return conn.execute(sql, params or {}).fetchall()


def night(root: Path, commitments: dict | None) -> dict[str, list[tuple]]:
    """Runs the nightly job with `attribution.commitments` set to `commitments` (None: no key) and
    returns the tables it compares."""
    config = root / "runledger.yaml"
    document = yaml.safe_load(config.read_text())
    document["attribution"].pop("commitments", None)
    if commitments is not None:
        document["attribution"]["commitments"] = commitments
    config.write_text(yaml.safe_dump(document))
    run_nightly(config, echo=lambda line: None)
    return compared_tables(root)


def compared_tables(root: Path) -> dict[str, list[tuple]]:
    return {name: query(root, sql) for name, sql in TABLES.items()} | {"differences": differences(root)}


@pytest.fixture(scope="module")
def nights(shared_demo: SharedDemo, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, dict]]:
    """The demo's tables after a night without the key, one with the rule written but off, and
    one with it on: the lake is left as the last night wrote it."""
    # the session's demo after its night is the night without the key (the demo's config has none)
    config = copy_demo(shared_demo, tmp_path_factory.mktemp("commitments") / "project", shared_inputs=True)
    root = config.parent
    assert "commitments" not in yaml.safe_load(config.read_text())["attribution"]
    tables = {
        "absent": compared_tables(root),
        "off": night(root, {"chargeback": False, "rules": [RULE]}),
        "on": night(root, {"chargeback": True, "rules": [RULE]}),
    }
    return root, tables


def rows_of(table: list[tuple], columns: tuple[str, ...], all_columns: tuple[str, ...]) -> list[tuple]:
    indexes = [all_columns.index(column) for column in columns]
    return [tuple(row[i] for i in indexes) for row in table]


def utilization(root: Path) -> dict[tuple[str, datetime], dict]:
    with reading(lake_of(root)) as conn:
        cursor = conn.execute("select * from commitment_utilization")
        names = [d[0] for d in cursor.description]
        return {
            (row["commitment_id"], datetime.combine(row["billing_period"], datetime.min.time())): row
            for row in (dict(zip(names, values)) for values in cursor.fetchall())
        }


def differences(root: Path) -> list[tuple]:
    """Every (source, period, column) of the reconciliation with its *_diff value."""
    with reading(lake_of(root)) as conn:
        cursor = conn.execute("select * from reconciliation order by source_name, billing_period")
        names = [d[0] for d in cursor.description]
        rows = cursor.fetchall()
    return [
        (row[names.index("source_name")], f"{row[names.index('billing_period')]:%Y-%m}", name, row[names.index(name)])
        for row in rows
        for name in names
        if name.endswith("_diff")
    ]


def test_the_reservation_bought_for_13b_sat_unused_for_50_232_96(nights: tuple[Path, dict]) -> None:
    root, tables = nights
    rate = money(RESERVATION_UPFRONT_HOURLY) + money(RESERVATION_RECURRING_HOURLY)
    expected = {}
    for start, end in ((OCTOBER, NOVEMBER), (NOVEMBER, DECEMBER)):
        reserved = RESERVED_INSTANCES * hours(start, end)
        used = RUN_13B_NODES * hours(max(start, RUN_13B_START), min(end, RUN_13B_END))
        expected[start] = (reserved - used) * rate
    assert expected == {OCTOBER: Decimal("28527.36"), NOVEMBER: Decimal("21705.60")}
    assert sum(expected.values()) == Decimal("50232.96")
    # the table of the last night (rule on) and the first (no rule) hold the same unused cost
    columns = ("commitment_id", "billing_period", "unused_cost", "unused_charged_cost")
    names = tuple(utilization(root)[(RESERVATION_ARN, OCTOBER)])
    for night_name, charged in (("absent", False), ("on", True)):
        reservation = [
            row
            for row in rows_of(tables[night_name]["commitment_utilization"], columns, names)
            if row[0] == RESERVATION_ARN
        ]
        assert [(row[1].month, row[2], row[3]) for row in reservation] == [
            (10, expected[OCTOBER], expected[OCTOBER] if charged else 0),
            (11, expected[NOVEMBER], expected[NOVEMBER] if charged else 0),
        ]


def test_utilization_and_coverage_match_the_demo_story(nights: tuple[Path, dict]) -> None:
    root, _ = nights
    table = utilization(root)
    assert len(table) == 5  # Savings Plan in October, reservation and committed use discount in both months
    rate = money(RESERVATION_UPFRONT_HOURLY) + money(RESERVATION_RECURRING_HOURLY)
    for start, end in ((OCTOBER, NOVEMBER), (NOVEMBER, DECEMBER)):
        row = table[(RESERVATION_ARN, start)]
        reserved = RESERVED_INSTANCES * hours(start, end)
        used = RUN_13B_NODES * hours(max(start, RUN_13B_START), min(end, RUN_13B_END))
        assert row["committed_cost"] == reserved * rate
        assert row["used_cost"] == used * rate
        assert row["fee_billed_cost"] == reserved * money(RESERVATION_RECURRING_HOURLY)  # the upfront part paid before
        assert row["utilization"] == (used / reserved).quantize(Decimal("1e-10"))
        assert row["coverage"] == 1  # every p4d hour of the demo ran on the reservation
    assert table[(RESERVATION_ARN, OCTOBER)]["utilization"] == Decimal("0.2580645161")  # 768 of 2,976 hours

    plan = table[(SAVINGS_PLAN_ARN, OCTOBER)]
    term_hours = hours(OCTOBER, SAVINGS_PLAN_TERM_END)  # 240: the plan ends on Oct 11
    node_hours = hours(RUN_7B_START, RUN_7B_END)  # 186: the 7B nodes run from Oct 3 until Oct 10 18:00
    hourly = SAVINGS_PLAN_COVERED_NODES * money(SAVINGS_PLAN_P5_HOURLY)
    assert plan["committed_cost"] == plan["fee_billed_cost"] == term_hours * hourly == Decimal("122640")
    assert plan["used_cost"] == node_hours * hourly == Decimal("95046")
    assert plan["unused_cost"] == (term_hours - node_hours) * hourly == Decimal("27594")
    assert plan["utilization"] == Decimal("0.775")
    # 14 of the 16 p5 nodes on the plan, 2 on demand, at the same list price
    assert plan["coverage"] == Decimal(SAVINGS_PLAN_COVERED_NODES) / RUN_7B_NODES == Decimal("0.875")
    assert plan["eligible_list_cost"] == RUN_7B_NODES * node_hours * money(P5.on_demand_hourly)

    gcp = [row for (commitment, _), row in table.items() if row["source_name"] == "gcp-main"]
    # the GCP export holds the commitment's covered usage but no fee: no committed cost to use
    assert len(gcp) == 2
    assert all(row["committed_cost"] is None and row["utilization"] is None for row in gcp)
    assert all(row["unused_cost"] == 0 and row["coverage"] == 1 for row in gcp)


def test_conservation_holds_with_the_chargeback_off_and_on(nights: tuple[Path, dict]) -> None:
    _, tables = nights
    for night_name in ("absent", "off", "on"):
        found = tables[night_name]["differences"]
        assert {(source, period) for source, period, _, _ in found} == {
            ("aws-main", "2026-10"),
            ("aws-main", "2026-11"),
            ("gcp-main", "2026-10"),
            ("gcp-main", "2026-11"),
        }
        assert [entry for entry in found if entry[3] != 0] == []


def test_the_rule_written_but_off_changes_nothing(nights: tuple[Path, dict]) -> None:
    _, tables = nights
    assert tables["off"] == tables["absent"]
    totals = {
        run: (estimated, actual, pct, status) for run, estimated, actual, _, pct, status in tables["off"]["totals"]
    }
    estimated, actual, pct, status = totals[RUN_13B]
    assert (estimated.quantize(Decimal("0.01")), actual.quantize(Decimal("0.01")), pct, status) == (
        Decimal("32961.00"),
        Decimal("25719.15"),
        Decimal("-22.0"),
        "under",
    )
    assert {run: pct for run, (_, _, pct, _) in totals.items()} == {
        "llm-7b-pt-r1": Decimal("19.5"),
        "llm-3b-pt-gcp": Decimal("-1.8"),
        RUN_13B: Decimal("-22.0"),
    }


def test_the_chargeback_makes_13b_over_and_leaves_the_other_runs_alone(nights: tuple[Path, dict]) -> None:
    root, tables = nights
    totals = {run: row for run, *row in tables["on"]["totals"]}
    estimated, actual, variance, pct, status = totals[RUN_13B]
    assert (pct, status) == (Decimal("130.4"), "over")
    charged = query(
        root,
        "select sum(effective_cost), count(*), min(allocation_rule), min(allocation_method) from cost_allocations "
        "where training_run = $run and allocation_rule like 'commitment %'",
        {"run": RUN_13B},
    )
    assert charged == [(Decimal("50232.96"), 2, "commitment p4d-reservation (fixed)", "shared")]
    assert actual.quantize(Decimal("0.01")) == Decimal("75952.11")
    assert variance == actual - estimated and variance.quantize(Decimal("0.01")) == Decimal("42991.11")

    def by_run(table: list[tuple], run_column: int = 0) -> dict[str, list[tuple]]:
        runs: dict[str, list[tuple]] = {}
        for row in table:
            runs.setdefault(row[run_column], []).append(row)
        return runs

    before, after = by_run(tables["absent"]["budget_variance"]), by_run(tables["on"]["budget_variance"])
    assert {run: rows for run, rows in after.items() if run != RUN_13B} == {
        run: rows for run, rows in before.items() if run != RUN_13B
    }
    costs_before, costs_after = by_run(tables["absent"]["run_costs"]), by_run(tables["on"]["run_costs"])
    assert {run: rows for run, rows in costs_after.items() if run != RUN_13B} == {
        run: rows for run, rows in costs_before.items() if run != RUN_13B
    }
    effective = 8  # run_costs.effective_cost
    assert sum(row[effective] for row in costs_after[RUN_13B]) - sum(
        row[effective] for row in costs_before[RUN_13B]
    ) == Decimal("50232.96")
    # the chargeback moves the reservation's unused part off the unattributed worklist, nothing else
    assert query(
        root,
        "select sum(effective_cost) from unattributed_costs where commitment like 'arn:aws:ec2:%:reserved-instances/%'",
    ) in ([(None,)], [(Decimal(0),)])


def test_the_report_shows_13b_with_and_without_the_chargeback(nights: tuple[Path, dict]) -> None:
    root, _ = nights
    report = (root / ".runledger" / "reports" / RUN_13B / "report.md").read_text()
    assert "## Unused commitment charged to the run" in report
    for line in (
        "**Actual without the chargeback (USD):** 25,719.15",
        "**Unused commitment charged (USD):** +50,232.96",
        "**Actual with it (USD):** 75,952.11",
        "**Variance without the chargeback:** -7,241.85 USD (-22.0 %)",
        "**Variance with it:** +42,991.11 USD (+130.4 %)",
    ):
        assert line in report
    assert (
        "Unused commitment charged" not in (root / ".runledger" / "reports" / "llm-7b-pt-r1" / "report.md").read_text()
    )
