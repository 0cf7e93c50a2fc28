"""The tag-hygiene worklist (`unattributed_costs`) and the untagged share: only spend a tag could
move (lines of a resource) counts as untagged; commitments, tax, credits, support, other purchases
and charges without a resource are listed apart."""

from datetime import date
from decimal import Decimal

import duckdb
import pytest

from pipelines.attribution.allocate import allocate_period
from pipelines.attribution.settings import DEFAULT_DIMENSIONS
from pipelines.warehouse.sql import read_sql
from pipelines.warehouse.summaries import UNATTRIBUTED_COSTS, build_summary
from tests.unit.test_attribution import PERIOD, add_line

SAVINGS_PLAN = "arn:aws:savingsplans::111122223333:savingsplan/sp-0a1b"
RESERVATION = "arn:aws:ec2:us-east-1:111122223333:reserved-instances/ri-0c2d"
PURCHASE = {"ChargeCategory": "Purchase", "ServiceName": "Savings Plans for AWS Compute usage"}


@pytest.fixture
def worklist(warehouse: duckdb.DuckDBPyConnection) -> duckdb.DuckDBPyConnection:
    """A month of October: one tagged run, two untagged resources and every kind of spend no tag
    can move; effective 1785, of which 785 with no run and 100 untagged resources."""
    usage = {"ChargeCategory": "Usage"}
    add_line(warehouse, "run", {"training_run": "llm-7b-pt-r1"}, "1000", "1000", **usage)
    add_line(warehouse, "dev", {}, "60", "60", **usage, ResourceId="i-dev")
    add_line(warehouse, "bucket", {}, "40", "40", **usage, ResourceId="ml-data", x_CostCategory="storage")
    # the Savings Plan's recurring fee names the plan as its resource; its effective cost is what went unused
    add_line(
        warehouse, "sp-fee", {}, "900", "200", **PURCHASE, ResourceId=SAVINGS_PLAN, CommitmentDiscountId=SAVINGS_PLAN
    )
    add_line(warehouse, "ri-fee", {}, "300", "300", **PURCHASE, ResourceId=None, CommitmentDiscountId=RESERVATION)
    add_line(
        warehouse,
        "sp-unused",
        {},
        "50",
        "50",
        **usage,
        ResourceId=SAVINGS_PLAN,
        CommitmentDiscountId=SAVINGS_PLAN,
        CommitmentDiscountStatus="Unused",
    )
    add_line(warehouse, "tax", {}, "80", "80", ChargeCategory="Tax", ResourceId=None, x_CostCategory="tax")
    add_line(warehouse, "credit", {}, "-100", "-100", ChargeCategory="Credit", ResourceId=None, x_CostCategory="other")
    add_line(
        warehouse,
        "support",
        {},
        "120",
        "120",
        ChargeCategory="Purchase",
        ServiceName="AWS Support (Business)",
        ResourceId=None,
        x_CostCategory="support",
    )
    add_line(
        warehouse,
        "requests",
        {},
        "10",
        "10",
        **usage,
        ServiceName="AmazonCloudWatch",
        ResourceId=None,
        x_CostCategory="monitoring",
    )
    add_line(
        warehouse, "marketplace", {}, "25", "25", ChargeCategory="Purchase", ServiceName="Marketplace", ResourceId="m-1"
    )
    allocate_period(warehouse, PERIOD, DEFAULT_DIMENSIONS)
    build_summary(warehouse, UNATTRIBUTED_COSTS)
    return warehouse


def test_the_worklist_lists_taggable_resources_first_and_the_rest_apart(worklist: duckdb.DuckDBPyConnection) -> None:
    rows = worklist.execute(
        "select resource, taggable, spend_kind, commitment, effective_cost, share_of_period from unattributed_costs"
    ).fetchall()

    assert rows == [
        ("i-dev", True, "resource", None, Decimal(60), 0.033613),
        ("ml-data", True, "resource", None, Decimal(40), 0.022409),
        (None, False, "commitment", RESERVATION, Decimal(300), 0.168067),
        (SAVINGS_PLAN, False, "commitment", SAVINGS_PLAN, Decimal(200), 0.112045),
        (None, False, "support", None, Decimal(120), 0.067227),
        (None, False, "credit", None, Decimal(-100), -0.056022),
        (None, False, "tax", None, Decimal(80), 0.044818),
        (SAVINGS_PLAN, False, "commitment", SAVINGS_PLAN, Decimal(50), 0.028011),
        ("m-1", False, "purchase", None, Decimal(25), 0.014006),
        (None, False, "no resource", None, Decimal(10), 0.005602),
    ]


def test_the_untagged_share_counts_only_taggable_spend(worklist: duckdb.DuckDBPyConnection) -> None:
    (share,) = worklist.execute(read_sql("marts/unattributed_costs", "share")).fetchall()

    # unattributed: every line but the run's; untagged: the dev instance and the bucket
    assert share == (
        date(2026, 10, 1),
        "USD",
        Decimal(1785),
        Decimal(785),
        pytest.approx(785 / 1785),
        Decimal(100),
        pytest.approx(100 / 1785),
    )


def test_the_spend_no_tag_can_move_is_summed_apart_by_kind(worklist: duckdb.DuckDBPyConnection) -> None:
    rows = worklist.execute(read_sql("marts/unattributed_costs", "not_taggable")).fetchall()

    assert [(kind, count, cost) for _, _, kind, count, cost in rows] == [
        ("commitment", 3, Decimal(550)),
        ("credit", 1, Decimal(-100)),
        ("no resource", 1, Decimal(10)),
        ("purchase", 1, Decimal(25)),
        ("support", 1, Decimal(120)),
        ("tax", 1, Decimal(80)),
    ]


def test_the_largest_offenders_are_untagged_resources_only(worklist: duckdb.DuckDBPyConnection) -> None:
    offenders = worklist.execute(
        read_sql("marts/unattributed_costs", "top_offenders"), {"billing_periods": [PERIOD], "limit": 10}
    ).fetchall()

    assert [(resource, cost) for _, _, _, _, resource, _, _, cost, _ in offenders] == [
        ("i-dev", Decimal(60)),
        ("ml-data", Decimal(40)),
    ]


@pytest.mark.parametrize(
    ("charge_category", "status", "commitment", "cost_category", "resource", "kind"),
    [
        ("Usage", None, None, "compute", "i-1", "resource"),
        ("Usage", "Used", SAVINGS_PLAN, "compute", "i-1", "resource"),
        ("Adjustment", None, None, "storage", "bucket", "resource"),
        ("Usage", "Unused", SAVINGS_PLAN, "compute", SAVINGS_PLAN, "commitment"),
        ("Purchase", None, RESERVATION, "compute", None, "commitment"),
        ("Purchase", None, None, "support", None, "support"),
        ("Purchase", None, None, "other", "domain.example", "purchase"),
        ("Tax", None, None, "tax", None, "tax"),
        ("Usage", None, None, "tax", "i-1", "tax"),
        ("Credit", None, None, "compute", "i-1", "credit"),
        ("Usage", None, None, "support", "i-1", "support"),
        ("Usage", None, None, "network", None, "no resource"),
        (None, None, None, "other", None, "no resource"),
    ],
)
def test_spend_kind_is_one_rule_on_focus_columns(
    warehouse: duckdb.DuckDBPyConnection,
    charge_category: str | None,
    status: str | None,
    commitment: str | None,
    cost_category: str,
    resource: str | None,
    kind: str,
) -> None:
    (found,) = warehouse.execute(
        "select spend_kind($charge_category, $status, $commitment, $cost_category, $resource)",
        {
            "charge_category": charge_category,
            "status": status,
            "commitment": commitment,
            "cost_category": cost_category,
            "resource": resource,
        },
    ).fetchone()
    assert found == kind
