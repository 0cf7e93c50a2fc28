"""Unused commitment charged back to runs (`attribution.commitments`), on an in-memory warehouse:
exact splits by covered usage and by fixed weights, rows no run used, precedence over shared-cost
rules, and the configuration's errors."""

from datetime import date, datetime
from decimal import Decimal
from pathlib import Path

import duckdb
import pytest

from pipelines.attribution.allocate import allocate_period
from pipelines.attribution.commitments import build_commitment_utilization
from pipelines.attribution.settings import DEFAULT_DIMENSIONS, CommitmentRule, SharedRule
from pipelines.config import load_config
from pipelines.config_rules import ConfigError
from pipelines.warehouse.connection import transaction

PERIOD = date(2026, 10, 1)
RESERVATION = "arn:aws:ec2:us-east-1:111122223333:reserved-instances/ri-1"
PLAN = "arn:aws:savingsplans::111122223333:savingsplan/sp-2"
RUN_A, RUN_B = "llm-7b-pt-r1", "llm-13b-ft-r2"


def add_line(
    conn: duckdb.DuckDBPyConnection, key: str, effective: str, run: str | None = None, **extra: object
) -> None:
    values = {
        "x_LineItemKey": key,
        "x_SourceName": "aws-main",
        "x_SourceFormat": "aws_cur2",
        "BillingCurrency": "USD",
        "BillingPeriodStart": datetime(2026, 10, 1),
        "ChargePeriodStart": datetime(2026, 10, 5, 3),
        "ChargePeriodEnd": datetime(2026, 10, 5, 4),
        "ProviderName": "Amazon Web Services",
        "ServiceName": "Amazon Elastic Compute Cloud",
        "ChargeCategory": "Usage",
        "BilledCost": Decimal(0),
        "EffectiveCost": Decimal(effective),
        "x_CostCategory": "compute",
        "x_GpuHours": Decimal(0),
        "tag_keys": ["user_training_run"] if run else [],
        "tag_values": [run] if run else [],
        **extra,
    }
    columns = [c for c in values if not c.startswith("tag_")]
    conn.execute(
        f"insert into focus_line_items ({', '.join(columns)}, Tags) "
        f"values ({', '.join('$' + c for c in columns)}, map($tag_keys::varchar[], $tag_values::varchar[]))",
        values,
    )


def covered(
    conn: duckdb.DuckDBPyConnection, key: str, commitment: str, run: str, effective: str, list_cost: str
) -> None:
    add_line(
        conn,
        key,
        effective,
        run,
        CommitmentDiscountId=commitment,
        CommitmentDiscountStatus="Used",
        PricingCategory="Committed",
        SkuId="p4d",
        ListCost=Decimal(list_cost),
        ResourceId=f"i-{key}",
    )


def fee(conn: duckdb.DuckDBPyConnection, key: str, commitment: str, billed: str, unused: str) -> None:
    """A commitment fee (EffectiveCost 0) and its derived Unused row, untagged."""
    add_line(conn, key, "0", ChargeCategory="Purchase", CommitmentDiscountId=commitment, BilledCost=Decimal(billed))
    add_line(
        conn,
        f"{key}|unused",
        unused,
        CommitmentDiscountId=commitment,
        CommitmentDiscountStatus="Unused",
        PricingCategory="Committed",
        x_DerivedFrom=key,
    )


@pytest.fixture
def commitments(warehouse: duckdb.DuckDBPyConnection) -> duckdb.DuckDBPyConnection:
    """A reservation used by both runs (30 and 10) with 1 unused, an on-demand hour of its SKU,
    and a Savings Plan no run used, 4 unused."""
    with transaction(warehouse):
        covered(warehouse, "a", RESERVATION, RUN_A, "20", "40")
        covered(warehouse, "a2", RESERVATION, RUN_A, "10", "20")
        covered(warehouse, "b", RESERVATION, RUN_B, "10", "20")
        add_line(warehouse, "od", "20", RUN_B, PricingCategory="Standard", SkuId="p4d", ListCost=Decimal(20))
        fee(warehouse, "ri-fee", RESERVATION, "25", "1")
        fee(warehouse, "sp-fee", PLAN, "4", "4")
    return warehouse


def charges(conn: duckdb.DuckDBPyConnection) -> list[tuple]:
    return conn.execute(
        "select x_LineItemKey, training_run, allocation_method, allocation_rule, allocation_ratio, effective_cost "
        "from cost_allocations where x_LineItemKey like '%|unused' order by all"
    ).fetchall()


def test_unused_commitment_follows_the_usage_it_covered_to_the_tenth_decimal(
    commitments: duckdb.DuckDBPyConnection,
) -> None:
    rules = [CommitmentRule(name="by-use", commitment="arn:aws:*", split="covered_usage")]
    checks = allocate_period(commitments, PERIOD, DEFAULT_DIMENSIONS, (), rules)
    assert [check["unbalanced_line_items"] for check in checks] == [0]
    rule = "commitment by-use (covered_usage)"
    assert charges(commitments) == [
        # 1 split 30 : 10 by the runs' covered usage; the on-demand hour of run B does not count
        ("ri-fee|unused", RUN_B, "shared", rule, Decimal("0.2500000000"), Decimal("0.2500000000")),
        ("ri-fee|unused", RUN_A, "shared", rule, Decimal("0.7500000000"), Decimal("0.7500000000")),
        # no run used the plan this period: it stays unattributed, saying why
        (
            "sp-fee|unused",
            None,
            "unattributed",
            "commitment by-use: no covered usage to charge",
            Decimal(1),
            Decimal(4),
        ),
    ]


def test_a_third_is_split_by_largest_remainder(warehouse: duckdb.DuckDBPyConnection) -> None:
    with transaction(warehouse):
        covered(warehouse, "a", RESERVATION, RUN_A, "10", "10")
        covered(warehouse, "b", RESERVATION, RUN_B, "20", "20")
        fee(warehouse, "ri-fee", RESERVATION, "31", "1")
    allocate_period(
        warehouse, PERIOD, DEFAULT_DIMENSIONS, (), [CommitmentRule(name="ri", commitment="*", split="covered_usage")]
    )
    assert [(run, ratio, cost) for _, run, _, _, ratio, cost in charges(warehouse)] == [
        (RUN_B, Decimal("0.6666666667"), Decimal("0.6666666667")),
        (RUN_A, Decimal("0.3333333333"), Decimal("0.3333333333")),
    ]


def test_named_runs_take_the_unused_part_by_weight_before_any_shared_rule(
    commitments: duckdb.DuckDBPyConnection,
) -> None:
    shared = [SharedRule(name="everything", match={"ChargeCategory": "*"}, split="even")]
    rules = [
        CommitmentRule(
            name="plan", commitment=PLAN, split="fixed", weights={RUN_A: Decimal("0.75"), RUN_B: Decimal("0.25")}
        )
    ]
    allocate_period(commitments, PERIOD, DEFAULT_DIMENSIONS, shared, rules)
    assert charges(commitments) == [
        # the reservation matches no commitment rule: the shared rule takes it, as without one
        ("ri-fee|unused", RUN_B, "shared", "shared everything (even)", Decimal("0.5"), Decimal("0.5")),
        ("ri-fee|unused", RUN_A, "shared", "shared everything (even)", Decimal("0.5"), Decimal("0.5")),
        ("sp-fee|unused", RUN_B, "shared", "commitment plan (fixed)", Decimal("0.25"), Decimal(1)),
        ("sp-fee|unused", RUN_A, "shared", "commitment plan (fixed)", Decimal("0.75"), Decimal(3)),
    ]


def test_without_rules_unused_commitment_stays_unattributed(commitments: duckdb.DuckDBPyConnection) -> None:
    allocate_period(commitments, PERIOD, DEFAULT_DIMENSIONS)
    assert [(key, run, method, rule) for key, run, method, rule, *_ in charges(commitments)] == [
        ("ri-fee|unused", None, "unattributed", None),
        ("sp-fee|unused", None, "unattributed", None),
    ]


def test_utilization_and_coverage_of_each_commitment(commitments: duckdb.DuckDBPyConnection) -> None:
    allocate_period(
        commitments,
        PERIOD,
        DEFAULT_DIMENSIONS,
        (),
        [CommitmentRule(name="ri", commitment=RESERVATION, split="covered_usage")],
    )
    with transaction(commitments):
        build_commitment_utilization(commitments)
    rows = commitments.execute(
        "select commitment_id, fee_billed_cost, committed_cost, used_cost, unused_cost, unused_charged_cost, "
        "utilization, covered_list_cost, eligible_list_cost, coverage from commitment_utilization order by all"
    ).fetchall()
    assert rows == [
        # used 40 of 41; covered 80 of the SKU's 100 at list price (20 ran on demand)
        (RESERVATION, 25, 41, 40, 1, 1, Decimal("0.9756097561"), 80, 100, Decimal("0.8")),
        # nothing used, nothing covered: no SKU to measure coverage on
        (PLAN, 4, 4, 0, 4, 0, 0, 0, None, None),
    ]


def write_config(tmp_path: Path, commitments: str) -> Path:
    path = tmp_path / "runledger.yaml"
    path.write_text(f"attribution:\n  commitments:\n{commitments}")
    return path


@pytest.mark.parametrize(
    ("commitments", "message"),
    [
        (
            "    chargeback: true\n",
            "attribution.commitments: Value error, rules: `chargeback: true` needs at least one",
        ),
        (
            "    rules:\n      - {name: r, commitment: '*', split: covered_usage, weights: {llm-7b-pt-r1: 1}}\n",
            "attribution.commitments.rules[0]: Value error, weights: only a `fixed` split takes weights",
        ),
        (
            "    rules:\n      - {name: r, commitment: '*', split: fixed, weights: {llm-7b-pt-r1: 0.5}}\n",
            "attribution.commitments.rules[0]: Value error, weights: must sum to exactly 1, they sum to 0.5",
        ),
        ("    rules:\n      - {name: r, commitment: '*', split: evenly}\n", "attribution.commitments.rules[0].split"),
        ("    charge_back: true\n", "attribution.commitments.charge_back"),
    ],
)
def test_bad_commitment_rules_name_the_key(tmp_path: Path, commitments: str, message: str) -> None:
    with pytest.raises(ConfigError) as error:
        load_config(write_config(tmp_path, commitments))
    assert str(tmp_path / "runledger.yaml") in str(error.value) and message in str(error.value)


def test_rules_apply_only_while_chargeback_is_on(tmp_path: Path) -> None:
    rule = "    rules:\n      - {name: r, commitment: '*', split: covered_usage}\n"
    assert load_config(write_config(tmp_path, rule)).attribution.commitments.active_rules == []
    (active,) = load_config(
        write_config(tmp_path, "    chargeback: true\n" + rule)
    ).attribution.commitments.active_rules
    assert (active.name, active.split) == ("r", "covered_usage")
