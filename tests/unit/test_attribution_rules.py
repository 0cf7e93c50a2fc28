"""Attribution steps 2 (resource tag snapshots) and 4 (shared-cost rules), and the issue's
scenarios with exact amounts, on a real DuckDB file."""

import json
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path

import duckdb
import pytest

from pipelines.attribution.allocate import allocate_period, check_period
from pipelines.attribution.registry import RegisteredRun
from pipelines.attribution.settings import DEFAULT_DIMENSIONS, SharedRule, shared_match_columns
from pipelines.ingest.load import replace_period
from pipelines.sources.gcp_billing.reader import GcpExportFilesReader
from pipelines.sources.mappings import read_category_rules
from pipelines.warehouse.sql import read_sql
from pipelines.warehouse.summaries import build_summaries
from tests.unit.test_attribution import PERIOD, add_line, parts, register

GCP = {
    "ProviderName": "Google Cloud",
    "x_SourceName": "gcp-main",
    "x_SourceFormat": "gcp_billing",
    "SubAccountId": "ml-research",
}


def snapshot(
    conn: duckdb.DuckDBPyConnection, arn: str, taken: datetime, tags: dict[str, str], source: str = "aws-tags"
) -> None:
    conn.execute(
        "insert into resource_tag_snapshots values ($source, $taken, 'us-east-1', $arn, normalize_resource_id($arn), "
        "map($keys::varchar[], $values::varchar[]))",
        {"source": source, "taken": taken, "arn": arn, "keys": list(tags), "values": list(tags.values())},
    )


def allocate(conn: duckdb.DuckDBPyConnection, *rules: SharedRule) -> None:
    allocate_period(conn, PERIOD, DEFAULT_DIMENSIONS, rules)
    build_summaries(conn)
    assert all(check["unbalanced_line_items"] == 0 for check in check_period(conn, PERIOD))


def rule(name: str, split: str, weights: dict[str, str] | None = None, **match: str) -> SharedRule:
    return SharedRule(
        name=name, match=match, split=split, weights={k: Decimal(v) for k, v in (weights or {}).items()} or None
    )


def amounts(conn: duckdb.DuckDBPyConnection, key: str) -> dict[str | None, tuple]:
    """training_run → (method, rule, ratio, billed, effective) of one line's parts."""
    return {p[0]: (p[1], p[2], p[3], p[4], p[5]) for p in parts(conn, key)}


def dimensions(conn: duckdb.DuckDBPyConnection, key: str) -> dict[str | None, tuple]:
    rows = conn.execute(
        "select training_run, experiment, dataset_version, owner from cost_allocations where x_LineItemKey = $key",
        {"key": key},
    ).fetchall()
    return {row[0]: row[1:] for row in rows}


# --- step 1 on both clouds ---------------------------------------------------------------------


def test_alias_keys_on_aws_and_gcp_lines(warehouse: duckdb.DuckDBPyConnection) -> None:
    add_line(
        warehouse, "aws", {"user:Training-Run": "llm-7b-pt-r1", "user:dataset": "fineweb-edu-v3.3"}, "12.34", "11.11"
    )
    add_line(warehouse, "gcp", {"training-run": "llm-13b-ft-r2", "team": "research"}, "0.505776", "0.405776", **GCP)
    add_line(warehouse, "gcp-run-id", {"Run ID": "llm-13b-ft-r2"}, "2", "2", **GCP)
    allocate(warehouse)

    assert amounts(warehouse, "aws") == {
        "llm-7b-pt-r1": ("tag", "tag user:Training-Run", 1, Decimal("12.34"), Decimal("11.11"))
    }
    assert dimensions(warehouse, "aws") == {"llm-7b-pt-r1": ("scaling-7b", "fineweb-edu-v3.3", "alice")}
    assert amounts(warehouse, "gcp") == {
        "llm-13b-ft-r2": ("tag", "tag training-run", 1, Decimal("0.505776"), Decimal("0.405776"))
    }
    assert dimensions(warehouse, "gcp") == {"llm-13b-ft-r2": ("ft-13b", "sft-mix-v7", "research")}
    assert amounts(warehouse, "gcp-run-id")["llm-13b-ft-r2"][:2] == ("tag", "tag Run ID")


def gcp_row(cost: str, labels: list[dict], project_labels: list[dict], resource: str) -> dict:
    return {
        "billing_account_id": "01A2B3-C4D5E6-F7A8B9",
        "service": {"id": "6F81-5844-456A", "description": "Compute Engine"},
        "sku": {"id": "BB77-5FDA-4A4D", "description": "N2 Instance Core running in Americas"},
        "usage_start_time": "2026-10-05 09:00:00 UTC",
        "usage_end_time": "2026-10-05 10:00:00 UTC",
        "project": {"id": "ml-research", "number": "120938475610", "name": "ml-research", "labels": project_labels},
        "labels": labels,
        "system_labels": [],
        "location": {"location": "us-central1-a", "country": "US", "region": "us-central1", "zone": "us-central1-a"},
        "resource": {
            "name": resource,
            "global_name": f"//compute.googleapis.com/projects/ml-research/zones/us-central1-a/instances/{resource}",
        },
        "export_time": "2026-10-05 12:05:10.924796 UTC",
        "cost": cost,
        "currency": "USD",
        "usage": {"amount": "3600", "unit": "seconds", "amount_in_pricing_units": "1", "pricing_unit": "hour"},
        "credits": [
            {
                "name": "Sustained use",
                "amount": "-0.25",
                "full_name": None,
                "id": "x",
                "type": "SUSTAINED_USAGE_DISCOUNT",
            }
        ],
        "invoice": {"month": "202610"},
        "cost_type": "regular",
        "cost_at_list": cost,
        "seller_name": "Google",
    }


def test_project_labels_attribute_gcp_lines_through_ingest(
    warehouse: duckdb.DuckDBPyConnection, tmp_path: Path
) -> None:
    project = [{"key": "training-run", "value": "llm-3b-pt-gcp"}, {"key": "team", "value": "research"}]
    rows = [
        gcp_row("10.00", [], project, "node-1"),  # the project's label is the only one
        gcp_row("4.50", [{"key": "training-run", "value": "llm-13b-ft-r2"}], project, "node-2"),  # own label wins
    ]
    export = tmp_path / "export.jsonl"
    export.write_text("".join(json.dumps(row) + "\n" for row in rows))
    reader = GcpExportFilesReader("gcp-main", [export], tmp_path / "staging")
    replace_period(warehouse, reader.batch(PERIOD, read_category_rules(), datetime(2026, 11, 1)))
    allocate(warehouse)

    result = warehouse.execute(
        "select ResourceId, training_run, owner, allocation_method, allocation_rule, billed_cost, effective_cost "
        "from cost_allocations order by billed_cost desc"
    ).fetchall()
    # net cost = cost + credits: 10.00 - 0.25 and 4.50 - 0.25
    assert [row[1:] for row in result] == [
        ("llm-3b-pt-gcp", "research", "tag", "tag training-run", Decimal("9.75"), Decimal("9.75")),
        ("llm-13b-ft-r2", "research", "tag", "tag training-run", Decimal("4.25"), Decimal("4.25")),
    ]


# --- step 2: resource tag snapshots ------------------------------------------------------------


def test_a_snapshot_only_tagged_resource_is_attributed_by_its_snapshot(warehouse: duckdb.DuckDBPyConnection) -> None:
    arn = "arn:aws:ec2:us-east-1:111122223333:instance/i-0snap"
    snapshot(warehouse, arn, datetime(2026, 10, 1), {"TrainingRun": "llm-7b-pt-r1", "dataset": "fineweb-edu-v3.4"})
    add_line(warehouse, "line", {"owner": "carol"}, "98.7654321", "87.6543219", ResourceId="i-0snap")
    allocate(warehouse)

    assert amounts(warehouse, "line") == {
        "llm-7b-pt-r1": (
            "resource_tags",
            "resource_tags TrainingRun (snapshot 2026-10-01T00:00:00Z)",
            1,
            Decimal("98.7654321"),
            Decimal("87.6543219"),
        )
    }
    # own tag (owner), then the snapshot (dataset), then the registry (experiment)
    assert dimensions(warehouse, "line") == {"llm-7b-pt-r1": ("scaling-7b", "fineweb-edu-v3.4", "carol")}


def test_the_snapshot_valid_at_the_charge_time_applies(warehouse: duckdb.DuckDBPyConnection) -> None:
    bucket = "arn:aws:s3:::ckpt-shared"
    snapshot(warehouse, bucket, datetime(2026, 10, 10), {"training_run": "llm-7b-pt-r1"})
    snapshot(warehouse, bucket, datetime(2026, 10, 20), {"training_run": "llm-13b-ft-r2"})
    snapshot(warehouse, bucket, datetime(2026, 10, 25), {"Name": "retagged to nobody"})
    for key, day in (("before-any", 5), ("first", 15), ("at-second", 19), ("second", 22), ("untagged-later", 27)):
        # daily lines: [day, day + 1)
        add_line(
            warehouse,
            key,
            {},
            "1",
            "1",
            ResourceId="ckpt-shared",
            ChargePeriodStart=datetime(2026, 10, day),
            ChargePeriodEnd=datetime(2026, 10, day + 1),
        )
    allocate(warehouse)

    runs = {
        key: next(iter(amounts(warehouse, key).items()))
        for key in ("before-any", "first", "at-second", "second", "untagged-later")
    }
    # no snapshot at or before Oct 6: the earliest one after it (Oct 10)
    assert runs["before-any"][0] == "llm-7b-pt-r1"
    assert runs["first"][0] == "llm-7b-pt-r1"
    # the line ends at Oct 20 00:00, the moment the second snapshot was taken: that one applies
    assert runs["at-second"] == (
        "llm-13b-ft-r2",
        ("resource_tags", "resource_tags training_run (snapshot 2026-10-20T00:00:00Z)", 1, Decimal(1), Decimal(1)),
    )
    assert runs["second"][0] == "llm-13b-ft-r2"
    assert runs["untagged-later"] == (None, ("unattributed", None, 1, Decimal(1), Decimal(1)))


def test_own_tags_come_before_snapshots_and_snapshots_before_the_registry(warehouse: duckdb.DuckDBPyConnection) -> None:
    register(
        warehouse,
        RegisteredRun(id="llm-7b-pt-r1", owner="alice", experiment="scaling-7b", resources=["i-0both"]),
        RegisteredRun(id="llm-13b-ft-r2", owner="bob", experiment="ft-13b"),
    )
    snapshot(
        warehouse,
        "arn:aws:ec2:us-east-1:111122223333:instance/i-0both",
        datetime(2026, 10, 1),
        {"training_run": "llm-13b-ft-r2", "owner": "bob-from-snapshot"},
    )
    add_line(warehouse, "tagged", {"training_run": "llm-7b-pt-r1"}, "3", "3", ResourceId="i-0both")
    add_line(warehouse, "untagged", {}, "5", "5", ResourceId="i-0both")
    allocate(warehouse)

    assert amounts(warehouse, "tagged")["llm-7b-pt-r1"][0] == "tag"
    # the snapshot names another run: its owner does not describe this allocation
    assert dimensions(warehouse, "tagged") == {"llm-7b-pt-r1": ("scaling-7b", None, "alice")}
    assert amounts(warehouse, "untagged")["llm-13b-ft-r2"][0] == "resource_tags"
    assert dimensions(warehouse, "untagged") == {"llm-13b-ft-r2": ("ft-13b", None, "bob-from-snapshot")}


def test_two_tag_sources_listing_one_resource_at_one_moment_pick_the_first_source(
    warehouse: duckdb.DuckDBPyConnection,
) -> None:
    taken = datetime(2026, 10, 1)
    snapshot(
        warehouse,
        "arn:aws:ec2:us-east-1:111122223333:instance/i-0dup",
        taken,
        {"training_run": "from-b"},
        source="b-tags",
    )
    snapshot(
        warehouse,
        "arn:aws:ec2:us-east-1:111122223333:instance/i-0dup",
        taken,
        {"training_run": "from-a"},
        source="a-tags",
    )
    add_line(warehouse, "line", {}, "1", "1", ResourceId="i-0dup")
    allocate(warehouse)
    assert list(amounts(warehouse, "line")) == ["from-a"]


# --- step 3: the registry scenarios ----------------------------------------------------


def test_a_shared_eval_node_is_split_two_to_one_by_weight(warehouse: duckdb.DuckDBPyConnection) -> None:
    register(
        warehouse,
        RegisteredRun(id="llm-7b-pt-r1", resources=["i-0eval*"], weight=2),
        RegisteredRun(id="llm-13b-ft-r2", resources=["i-0eval01"], weight=1),
    )
    add_line(warehouse, "eval", {}, "32.77", "24.58", ResourceId="i-0eval01", x_GpuHours=Decimal("8"))
    allocate(warehouse)
    # 32.77 × 2/3 = 21.8466666666 r.67 → +1 unit; × 1/3 = 10.9233333333 r.33
    assert parts(warehouse, "eval") == [
        (
            "llm-13b-ft-r2",
            "registry",
            "registry i-0eval01",
            Decimal("0.3333333333"),
            Decimal("10.9233333333"),
            Decimal("8.1933333333"),
            Decimal("2.6666666667"),
        ),
        (
            "llm-7b-pt-r1",
            "registry",
            "registry i-0eval*",
            Decimal("0.6666666667"),
            Decimal("21.8466666667"),
            Decimal("16.3866666667"),
            Decimal("5.3333333333"),
        ),
    ]


def test_the_idle_tail_after_a_run_window_stays_unattributed_even_under_a_matching_rule(
    warehouse: duckdb.DuckDBPyConnection,
) -> None:
    register(
        warehouse,
        RegisteredRun(
            id="llm-7b-pt-r1", start=datetime(2026, 10, 3), end=datetime(2026, 10, 5, 4, 30), resources=["i-0a1*"]
        ),
    )
    add_line(warehouse, "during", {}, "40", "40", ResourceId="i-0a1b")
    add_line(
        warehouse,
        "edge",
        {},
        "40",
        "40",
        ResourceId="i-0a1b",
        ChargePeriodStart=datetime(2026, 10, 5, 4),
        ChargePeriodEnd=datetime(2026, 10, 5, 5),
    )
    add_line(
        warehouse,
        "tail",
        {},
        "40",
        "40",
        ResourceId="i-0a1b",
        ChargePeriodStart=datetime(2026, 10, 5, 5),
        ChargePeriodEnd=datetime(2026, 10, 5, 6),
    )
    allocate(warehouse, rule("all-ec2", "even", ServiceName="Amazon Elastic Compute Cloud"))

    assert amounts(warehouse, "during") == {
        "llm-7b-pt-r1": ("registry", "registry i-0a1*", 1, Decimal(40), Decimal(40))
    }
    assert amounts(warehouse, "edge") == {
        "llm-7b-pt-r1": ("registry", "registry i-0a1*", Decimal("0.5"), Decimal(20), Decimal(20)),
        None: ("unattributed", "outside registry window", Decimal("0.5"), Decimal(20), Decimal(20)),
    }
    assert amounts(warehouse, "tail") == {
        None: ("unattributed", "outside registry window", 1, Decimal(40), Decimal(40))
    }
    worklist = warehouse.execute("select resource, effective_cost from unattributed_costs").fetchall()
    assert worklist == [("i-0a1b", Decimal(60))]


# --- step 4: shared-cost rules -----------------------------------------------------------------


def three_runs_with_spend(conn: duckdb.DuckDBPyConnection) -> None:
    """Effective cost by steps 1-3 in October on AWS: 600 + 300 + 100 (+ a GCP-only run)."""
    register(
        conn,
        RegisteredRun(id="llm-7b-pt-r1", owner="alice", experiment="scaling-7b", resources=["i-0reg"]),
        RegisteredRun(id="idle-run", owner="erin", resources=["i-never-used"]),
    )
    add_line(conn, "r1-tag", {"training_run": "llm-7b-pt-r1"}, "450", "400")
    add_line(conn, "r1-registry", {}, "250", "200", ResourceId="i-0reg")
    add_line(conn, "r2", {"training_run": "llm-13b-ft-r2", "owner": "bob"}, "300", "300")
    add_line(conn, "r3", {"training_run": "llm-1b-abl-r3", "owner": "dave", "experiment": "ablation"}, "120", "100")
    add_line(conn, "gcp-run", {"training_run": "llm-3b-pt-gcp"}, "999", "999", **GCP)


def test_a_support_fee_is_split_proportionally_across_three_runs(warehouse: duckdb.DuckDBPyConnection) -> None:
    three_runs_with_spend(warehouse)
    add_line(
        warehouse,
        "support",
        {},
        "77.77",
        "77.77",
        ServiceName="AWS Support (Business)",
        ResourceId=None,
        x_CostCategory="support",
    )
    allocate(warehouse, rule("support", "proportional", ServiceName="AWS Support*"))

    # 600 : 300 : 100 of 77.77 → 46.662, 23.331, 7.777; the GCP run and the idle run get nothing
    assert amounts(warehouse, "support") == {
        "llm-7b-pt-r1": (
            "shared",
            "shared support (proportional)",
            Decimal("0.6"),
            Decimal("46.662"),
            Decimal("46.662"),
        ),
        "llm-13b-ft-r2": (
            "shared",
            "shared support (proportional)",
            Decimal("0.3"),
            Decimal("23.331"),
            Decimal("23.331"),
        ),
        "llm-1b-abl-r3": (
            "shared",
            "shared support (proportional)",
            Decimal("0.1"),
            Decimal("7.777"),
            Decimal("7.777"),
        ),
    }
    # a shared part describes its run: registry, else what the run's own allocations carry
    assert dimensions(warehouse, "support") == {
        "llm-7b-pt-r1": ("scaling-7b", None, "alice"),
        "llm-13b-ft-r2": (None, None, "bob"),
        "llm-1b-abl-r3": ("ablation", None, "dave"),
    }
    costs = dict(warehouse.execute("select training_run, sum(effective_cost) from run_costs group by all").fetchall())
    assert costs == {
        "llm-7b-pt-r1": Decimal("646.662"),
        "llm-13b-ft-r2": Decimal("323.331"),
        "llm-1b-abl-r3": Decimal("107.777"),
        "llm-3b-pt-gcp": Decimal(999),
    }


def test_a_fixed_split_gives_a_run_with_no_spend_its_share(warehouse: duckdb.DuckDBPyConnection) -> None:
    three_runs_with_spend(warehouse)
    add_line(warehouse, "sp-fee", {}, "1000.01", "0", ChargeCategory="Purchase", ResourceId=None)
    allocate(
        warehouse, rule("sp-fees", "fixed", {"llm-13b-ft-r2": "0.75", "idle-run": "0.25"}, ChargeCategory="Purchase")
    )
    assert amounts(warehouse, "sp-fee") == {
        "llm-13b-ft-r2": ("shared", "shared sp-fees (fixed)", Decimal("0.75"), Decimal("750.0075"), Decimal(0)),
        "idle-run": ("shared", "shared sp-fees (fixed)", Decimal("0.25"), Decimal("250.0025"), Decimal(0)),
    }
    assert dimensions(warehouse, "sp-fee")["idle-run"] == (None, None, "erin")


def test_a_rule_taking_commitment_fees_takes_their_unused_rows_too(warehouse: duckdb.DuckDBPyConnection) -> None:
    # An SP hour of $24 with $4 unused: the fee purchases (effective 0), its Unused row amortizes the $4.
    three_runs_with_spend(warehouse)
    fee = {"ResourceId": None, "CommitmentDiscountId": "arn:aws:savingsplans::111122223333:savingsplan/sp"}
    add_line(warehouse, "sp-fee", {}, "24", "0", ChargeCategory="Purchase", **fee)
    add_line(
        warehouse,
        "sp-fee|unused",
        {},
        "0",
        "4",
        ChargeCategory="Usage",
        CommitmentDiscountStatus="Unused",
        x_DerivedFrom="sp-fee",
        **fee,
    )
    allocate(
        warehouse, rule("sp-fees", "fixed", {"llm-13b-ft-r2": "0.75", "idle-run": "0.25"}, ChargeCategory="Purchase")
    )
    assert amounts(warehouse, "sp-fee") == {
        "llm-13b-ft-r2": ("shared", "shared sp-fees (fixed)", Decimal("0.75"), Decimal("18"), Decimal(0)),
        "idle-run": ("shared", "shared sp-fees (fixed)", Decimal("0.25"), Decimal("6"), Decimal(0)),
    }
    # the Unused row is matched as its fee: the same split of the $4 the fee amortized before
    assert amounts(warehouse, "sp-fee|unused") == {
        "llm-13b-ft-r2": ("shared", "shared sp-fees (fixed)", Decimal("0.75"), Decimal(0), Decimal("3")),
        "idle-run": ("shared", "shared sp-fees (fixed)", Decimal("0.25"), Decimal(0), Decimal("1")),
    }


def test_a_run_with_no_spend_takes_no_part_of_proportional_or_even_splits(warehouse: duckdb.DuckDBPyConnection) -> None:
    three_runs_with_spend(warehouse)
    add_line(warehouse, "nat", {}, "9", "9", ServiceName="Amazon Virtual Private Cloud", ResourceId="nat-0abc")
    allocate(warehouse, rule("network", "even", ServiceName="Amazon Virtual Private Cloud"))
    assert {run: part[3] for run, part in amounts(warehouse, "nat").items()} == {
        "llm-7b-pt-r1": Decimal(3),
        "llm-13b-ft-r2": Decimal(3),
        "llm-1b-abl-r3": Decimal(3),
    }
    assert warehouse.execute("select count(*) from run_costs where training_run = 'idle-run'").fetchone() == (0,)


def test_rules_apply_in_order_and_only_to_lines_no_step_claimed(warehouse: duckdb.DuckDBPyConnection) -> None:
    three_runs_with_spend(warehouse)
    add_line(warehouse, "support", {}, "10", "10", ServiceName="AWS Support (Business)", ResourceId=None)
    add_line(
        warehouse, "tagged-support", {"training_run": "llm-13b-ft-r2"}, "5", "5", ServiceName="AWS Support (Business)"
    )
    allocate(
        warehouse,
        rule("first", "fixed", {"llm-1b-abl-r3": "1"}, ServiceName="AWS Support*", BillingCurrency="USD"),
        rule("second", "even", ServiceName="AWS *"),
    )
    assert amounts(warehouse, "support") == {
        "llm-1b-abl-r3": ("shared", "shared first (fixed)", 1, Decimal(10), Decimal(10))
    }
    assert list(amounts(warehouse, "tagged-support")) == ["llm-13b-ft-r2"]
    assert [p[:3] for p in parts(warehouse, "r1-registry")] == [("llm-7b-pt-r1", "registry", "registry i-0reg")]


def test_a_rule_with_no_runs_to_share_with_leaves_the_line_unattributed_and_says_so(
    warehouse: duckdb.DuckDBPyConnection,
) -> None:
    add_line(warehouse, "gcp-run", {"training_run": "llm-3b-pt-gcp"}, "50", "50", **GCP)
    add_line(warehouse, "support", {}, "29", "29", ServiceName="AWS Support (Developer)", ResourceId=None)
    allocate(warehouse, rule("support", "proportional", ServiceName="AWS Support*"))
    assert amounts(warehouse, "support") == {
        None: ("unattributed", "shared support: no runs to share with", 1, Decimal(29), Decimal(29))
    }


def test_proportional_skips_runs_whose_spend_is_not_positive_and_negative_lines_split_exactly(
    warehouse: duckdb.DuckDBPyConnection,
) -> None:
    add_line(warehouse, "a", {"training_run": "a"}, "2", "2")
    add_line(warehouse, "b", {"training_run": "b"}, "1", "1")
    add_line(warehouse, "credit-only", {"training_run": "c"}, "-5", "-5")
    add_line(warehouse, "refund", {}, "-0.0000000010", "-0.0000000010", ServiceName="AWS Support (Business)")
    allocate(warehouse, rule("support", "proportional", ServiceName="AWS Support*"))
    # 2:1 of -10 units: -6.67 and -3.33 → largest remainder gives a 7, b 3
    assert {run: part[3] for run, part in amounts(warehouse, "refund").items()} == {
        "a": Decimal("-7E-10"),
        "b": Decimal("-3E-10"),
    }


@pytest.mark.parametrize("column", shared_match_columns())
def test_every_matchable_column_matches_by_glob(warehouse: duckdb.DuckDBPyConnection, column: str) -> None:
    # the run's line has the same value: ProviderName and BillingCurrency also delimit whom a line is shared with
    add_line(warehouse, "run", {"training_run": "r"}, "1", "1", **{column: "Value-42"})
    add_line(warehouse, "line", {}, "6", "6", **{column: "Value-42"})
    add_line(warehouse, "other", {}, "6", "6", **{column: "value-42"})
    allocate(warehouse, rule("by-column", "even", **{column: "Val*-4?"}))
    assert amounts(warehouse, "line") == {"r": ("shared", "shared by-column (even)", 1, Decimal(6), Decimal(6))}
    assert amounts(warehouse, "other") == {None: ("unattributed", None, 1, Decimal(6), Decimal(6))}, (
        "globs are case-sensitive"
    )


def test_allocation_runs_in_one_period_only(warehouse: duckdb.DuckDBPyConnection) -> None:
    add_line(warehouse, "oct", {"training_run": "r"}, "4", "4")
    add_line(
        warehouse,
        "nov-support",
        {},
        "8",
        "8",
        ServiceName="AWS Support (Business)",
        BillingPeriodStart=datetime(2026, 11, 1),
        ChargePeriodStart=datetime(2026, 11, 2),
        ChargePeriodEnd=datetime(2026, 11, 3),
    )
    allocate_period(
        warehouse, date(2026, 11, 1), DEFAULT_DIMENSIONS, [rule("support", "even", ServiceName="AWS Support*")]
    )
    # October's run does not share November's fee
    assert amounts(warehouse, "nov-support") == {
        None: ("unattributed", "shared support: no runs to share with", 1, Decimal(8), Decimal(8))
    }


# --- a run's experiment, dataset version and owner ---------------------------------------------


def test_a_run_names_one_experiment_dataset_and_owner_in_its_costs_report_and_shared_parts(
    warehouse: duckdb.DuckDBPyConnection,
) -> None:
    run = {"training_run": "llm-x"}
    # experiment: exp-a 4 + 2 ties exp-b 6, the smaller value wins; owner: dave 6 over erin 4;
    # dataset: |-5| of ds-2 weighs more than 3 of ds-1
    add_line(warehouse, "x1", run | {"experiment": "exp-b", "owner": "dave"}, "6", "6")
    add_line(warehouse, "x2", run | {"experiment": "exp-a", "owner": "erin"}, "4", "4")
    add_line(warehouse, "x3", run | {"experiment": "exp-a"}, "2", "2")
    add_line(warehouse, "x4", run | {"dataset": "ds-2"}, "-5", "-5")
    add_line(warehouse, "x5", run | {"dataset": "ds-1"}, "3", "3")
    # the registry's values win over the line's own tags
    add_line(warehouse, "r1", {"training_run": "llm-7b-pt-r1", "experiment": "other", "owner": "zoe"}, "90", "90")
    add_line(warehouse, "tax", {}, "10", "10", ChargeCategory="Tax", ResourceId=None)
    allocate(warehouse, rule("tax", "proportional", ChargeCategory="Tax"))

    expected = {
        "llm-x": ("exp-a", "ds-2", "dave"),
        "llm-7b-pt-r1": ("scaling-7b", "fineweb-edu-v3.2", "alice"),
    }
    assert dimensions(warehouse, "tax") == expected
    assert dimensions(warehouse, "x2") == {"llm-x": ("exp-a", None, "erin")}, "a line's own part keeps its tags"
    costs = warehouse.execute(
        "select distinct training_run, experiment, dataset_version, owner from run_costs"
    ).fetchall()
    assert {row[0]: row[1:] for row in costs} == expected
    cursor = warehouse.execute(
        read_sql("reports/run_header"), {"training_runs": ["llm-x", "llm-7b-pt-r1", "llm-13b-ft-r2"]}
    )
    columns = [column[0] for column in cursor.description]
    headers = [dict(zip(columns, row)) for row in cursor.fetchall()]
    # a registered run without spend has its registry's
    assert {h["training_run"]: (h["experiment"], h["dataset_version"], h["owner"]) for h in headers} == expected | {
        "llm-13b-ft-r2": ("ft-13b", "sft-mix-v7", "bob")
    }


def test_custom_dimensions_come_from_tags_then_snapshots_and_shared_parts_carry_their_runs(
    warehouse: duckdb.DuckDBPyConnection,
) -> None:
    dimensions = {**DEFAULT_DIMENSIONS, "environment": ["env", "environment"], "project": ["project"]}
    add_line(warehouse, "prod", {"training_run": "r1", "user:Env": "prod", "project": "atlas"}, "10", "10")
    add_line(warehouse, "dev", {"training_run": "r1", "environment": " dev "}, "1", "1")
    # own tags name the run, the snapshot the environment; the tags' project wins over the snapshot's
    add_line(warehouse, "mixed", {"training_run": "r2", "project": "own"}, "3", "3", ResourceId="i-0mixed")
    snapshot(warehouse, "i-0mixed", datetime(2026, 10, 1), {"env": "staging", "project": "snapshot"})
    add_line(warehouse, "plain", {"training_run": "r2"}, "1", "1")
    add_line(
        warehouse,
        "support",
        {},
        "2",
        "2",
        ServiceName="AWS Support (Business)",
        ResourceId=None,
        x_CostCategory="support",
    )
    allocate_period(warehouse, PERIOD, dimensions, [rule("support", "proportional", ServiceName="AWS Support*")])
    build_summaries(warehouse)
    rows = warehouse.execute(
        "select x_LineItemKey, training_run, custom_dimensions, effective_cost from cost_allocations order by all"
    ).fetchall()
    assert rows == [
        ("dev", "r1", {"environment": "dev"}, Decimal(1)),
        ("mixed", "r2", {"environment": "staging", "project": "own"}, Decimal(3)),
        ("plain", "r2", {}, Decimal(1)),
        ("prod", "r1", {"environment": "prod", "project": "atlas"}, Decimal(10)),
        # 2 x 11/15 and 2 x 4/15, each part described by its run's values
        ("support", "r1", {"environment": "prod", "project": "atlas"}, Decimal("1.4666666667")),
        ("support", "r2", {"environment": "staging", "project": "own"}, Decimal("0.5333333333")),
    ]
    assert all(check["unbalanced_line_items"] == 0 for check in check_period(warehouse, PERIOD))
    runs = warehouse.execute("select distinct training_run, custom_dimensions from run_costs order by all").fetchall()
    assert runs == [
        ("r1", {"environment": "prod", "project": "atlas"}),
        ("r2", {"environment": "staging", "project": "own"}),
    ]
