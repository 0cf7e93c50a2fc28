"""Attribution by tags (attribution steps 1 and 5) with registry enrichment, on a real DuckDB file."""

from datetime import date, datetime
from decimal import Decimal

import duckdb
import pytest

from pipelines.attribution.allocate import allocate_period, check_period
from pipelines.attribution.registry import RegisteredRun, replace_run_registry
from pipelines.attribution.settings import DEFAULT_DIMENSIONS
from pipelines.warehouse.connection import transaction
from pipelines.warehouse.conservation import ConservationError
from pipelines.warehouse.summaries import build_summaries

PERIOD = date(2026, 10, 1)


def add_line(
    conn: duckdb.DuckDBPyConnection, key: str, tags: dict[str, str], billed: str, effective: str, **extra: object
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
        "SubAccountId": "111122223333",
        "ServiceName": "Amazon Elastic Compute Cloud",
        "ResourceId": f"i-{key}",
        "BilledCost": Decimal(billed),
        "EffectiveCost": Decimal(effective),
        "x_CostCategory": "compute",
        "x_GpuHours": Decimal("8"),
        "tag_keys": list(tags),
        "tag_values": list(tags.values()),
        **extra,
    }
    columns = [c for c in values if not c.startswith("tag_")]
    conn.execute(
        f"insert into focus_line_items ({', '.join(columns)}, Tags) "
        f"values ({', '.join('$' + c for c in columns)}, map($tag_keys::varchar[], $tag_values::varchar[]))",
        values,
    )


def allocations(conn: duckdb.DuckDBPyConnection) -> dict[str, tuple]:
    rows = conn.execute(
        "select x_LineItemKey, training_run, experiment, dataset_version, owner, allocation_method, allocation_rule, "
        "allocation_ratio, billed_cost, effective_cost, gpu_hours from cost_allocations"
    ).fetchall()
    return {row[0]: row[1:] for row in rows}


def test_tag_keys_match_case_insensitively_with_separators_and_user_prefix(
    warehouse: duckdb.DuckDBPyConnection,
) -> None:
    add_line(warehouse, "a", {"user_training_run": "llm-7b-pt-r1"}, "10.5", "7.25")
    add_line(warehouse, "b", {"user:Training-Run": "llm-13b-ft-r2", "user:team": "platform"}, "3", "3")
    add_line(warehouse, "c", {"TrainingRun": " llm-7b-pt-r1 ", "Owner": "dave"}, "1", "1")
    add_line(warehouse, "d", {"user_run_id": "llm-13b-ft-r2"}, "2", "2")
    allocate_period(warehouse, PERIOD, DEFAULT_DIMENSIONS)

    result = allocations(warehouse)
    assert result["a"][:6] == (
        "llm-7b-pt-r1",
        "scaling-7b",
        "fineweb-edu-v3.2",
        "alice",
        "tag",
        "tag user_training_run",
    )
    # the line's own owner tag wins over the registry; the registry fills the rest
    assert result["b"][:5] == ("llm-13b-ft-r2", "ft-13b", "sft-mix-v7", "platform", "tag")
    assert result["c"][0] == "llm-7b-pt-r1" and result["c"][3] == "dave"
    assert result["d"][0] == "llm-13b-ft-r2" and result["d"][5] == "tag user_run_id"
    assert result["a"][6:] == (Decimal(1), Decimal("10.5"), Decimal("7.25"), Decimal(8))


def test_first_configured_alias_wins(warehouse: duckdb.DuckDBPyConnection) -> None:
    add_line(warehouse, "a", {"run_id": "llm-13b-ft-r2", "training-run": "llm-7b-pt-r1"}, "5", "5")
    allocate_period(warehouse, PERIOD, DEFAULT_DIMENSIONS)
    assert allocations(warehouse)["a"][0] == "llm-7b-pt-r1"

    allocate_period(warehouse, PERIOD, {**DEFAULT_DIMENSIONS, "training_run": ["run_id", "training_run"]})
    assert allocations(warehouse)["a"][0] == "llm-13b-ft-r2"


def test_two_spellings_of_one_key_the_first_as_written_with_a_value_wins(warehouse: duckdb.DuckDBPyConnection) -> None:
    add_line(
        warehouse,
        "a",
        {"training_run": "llm-13b-ft-r2", "Training_Run": "llm-7b-pt-r1", "owner": "erin", "Owner": "dave"},
        "2",
        "2",
    )
    add_line(warehouse, "b", {"training_run": "llm-13b-ft-r2", "Training_Run": " ", "Owner": "dave"}, "3", "3")
    allocate_period(warehouse, PERIOD, DEFAULT_DIMENSIONS)

    result = allocations(warehouse)
    # "Training_Run" sorts before "training_run"; a blank value falls through to the next spelling
    assert (result["a"][0], result["a"][3], result["a"][5]) == ("llm-7b-pt-r1", "dave", "tag Training_Run")
    assert (result["b"][0], result["b"][3], result["b"][5]) == ("llm-13b-ft-r2", "dave", "tag training_run")


def test_untagged_and_unknown_keys_are_unattributed_but_keep_owner(warehouse: duckdb.DuckDBPyConnection) -> None:
    add_line(warehouse, "a", {}, "4.1234567891", "4.1234567891")
    add_line(warehouse, "b", {"team": "data-eng", "cost center": "42", "training_run": "  "}, "6", "5")
    allocate_period(warehouse, PERIOD, DEFAULT_DIMENSIONS)

    result = allocations(warehouse)
    assert result["a"][:6] == (None, None, None, None, "unattributed", None)
    assert result["a"][7] == Decimal("4.1234567891")
    assert result["b"][:5] == (None, None, None, "data-eng", "unattributed")


def test_tag_values_are_data_not_sql(warehouse: duckdb.DuckDBPyConnection) -> None:
    hostile = "x'); drop table focus_line_items; --"
    add_line(warehouse, "a", {"training_run": hostile, "owner": "😀" * 10}, "1", "1")
    allocate_period(warehouse, PERIOD, DEFAULT_DIMENSIONS)
    assert allocations(warehouse)["a"][0] == hostile
    assert warehouse.execute("select count(*) from focus_line_items").fetchone() == (1,)


def test_conservation_check_counts_unbalanced_lines(warehouse: duckdb.DuckDBPyConnection) -> None:
    add_line(warehouse, "a", {"training_run": "llm-7b-pt-r1"}, "10", "8")
    add_line(warehouse, "b", {}, "2.5", "2.5")
    allocate_period(warehouse, PERIOD, DEFAULT_DIMENSIONS)
    (check,) = check_period(warehouse, PERIOD)
    assert (check["line_items"], check["unbalanced_line_items"]) == (2, 0)
    assert check["allocated_billed_cost"] == check["focus_billed_cost"] == Decimal("12.5")

    warehouse.execute(
        "update cost_allocations set effective_cost = effective_cost + 0.0000000001 where x_LineItemKey = 'b'"
    )
    (check,) = check_period(warehouse, PERIOD)
    assert check["unbalanced_line_items"] == 1


def test_allocations_that_do_not_balance_are_rolled_back(warehouse: duckdb.DuckDBPyConnection) -> None:
    # Keys are unique by construction; a second line with key "b" (written by something else)
    # makes each "b" line's allocations sum to both lines: the replacement must not land.
    add_line(warehouse, "a", {"training_run": "llm-7b-pt-r1"}, "10", "8")
    add_line(warehouse, "b", {}, "2.5", "2.5")
    checks = allocate_period(warehouse, PERIOD, DEFAULT_DIMENSIONS)
    assert [(c["line_items"], c["unbalanced_line_items"], c["allocated_billed_cost"]) for c in checks] == [
        (2, 0, Decimal("12.5"))
    ]
    before = allocations(warehouse)

    add_line(warehouse, "b", {"training_run": "llm-13b-ft-r2"}, "4", "4")
    with pytest.raises(ConservationError, match=r"billing period 2026-10: source aws-main \(USD\): 2 of 3 line items"):
        allocate_period(warehouse, PERIOD, DEFAULT_DIMENSIONS)
    assert allocations(warehouse) == before
    assert warehouse.execute("select count(*), sum(billed_cost) from cost_allocations").fetchone() == (
        2,
        Decimal("12.5"),
    )


def test_reallocating_a_period_replaces_it(warehouse: duckdb.DuckDBPyConnection) -> None:
    add_line(warehouse, "a", {"training_run": "llm-7b-pt-r1"}, "10", "8")
    allocate_period(warehouse, PERIOD, DEFAULT_DIMENSIONS)
    allocate_period(warehouse, PERIOD, DEFAULT_DIMENSIONS)
    assert warehouse.execute("select count(*), sum(billed_cost) from cost_allocations").fetchone() == (1, Decimal(10))


def register(conn: duckdb.DuckDBPyConnection, *runs: RegisteredRun) -> None:
    with transaction(conn):
        replace_run_registry(conn, list(runs))


def parts(conn: duckdb.DuckDBPyConnection, key: str) -> list[tuple]:
    return conn.execute(
        "select training_run, allocation_method, allocation_rule, allocation_ratio, billed_cost, effective_cost, "
        "gpu_hours from cost_allocations where x_LineItemKey = $key order by training_run nulls last",
        {"key": key},
    ).fetchall()


def test_registry_attributes_untagged_resources_within_the_window(warehouse: duckdb.DuckDBPyConnection) -> None:
    register(
        warehouse,
        RegisteredRun(
            id="llm-7b-pt-r1",
            owner="alice",
            experiment="scaling-7b",
            start=datetime(2026, 10, 3),
            end=datetime(2026, 10, 10),
            resources=["i-0a1*", "ckpt-7b"],
        ),
    )
    add_line(warehouse, "in", {}, "36.5", "29.2", ResourceId="i-0a1b2c")
    add_line(
        warehouse,
        "late",
        {},
        "36.5",
        "29.2",
        ResourceId="i-0a1b2c",
        ChargePeriodStart=datetime(2026, 10, 12),
        ChargePeriodEnd=datetime(2026, 10, 12, 1),
    )
    add_line(warehouse, "other", {}, "5", "5", ResourceId="i-0ffff")
    add_line(warehouse, "tagged", {"training_run": "llm-13b-ft-r2"}, "7", "7", ResourceId="i-0a1b2c")
    allocate_period(warehouse, PERIOD, DEFAULT_DIMENSIONS)

    assert parts(warehouse, "in") == [
        ("llm-7b-pt-r1", "registry", "registry i-0a1*", Decimal(1), Decimal("36.5"), Decimal("29.2"), Decimal(8))
    ]
    assert [p[:2] for p in parts(warehouse, "late")] == [(None, "unattributed")]
    assert [p[:2] for p in parts(warehouse, "other")] == [(None, "unattributed")]
    assert [p[:2] for p in parts(warehouse, "tagged")] == [("llm-13b-ft-r2", "tag")], "tags come before the registry"
    owner = warehouse.execute("select owner, experiment from cost_allocations where x_LineItemKey = 'in'").fetchone()
    assert owner == ("alice", "scaling-7b")


def test_a_line_across_the_window_edge_is_split_by_overlap(warehouse: duckdb.DuckDBPyConnection) -> None:
    register(warehouse, RegisteredRun(id="r1", end=datetime(2026, 10, 5, 18), resources=["vol-*"]))
    # a daily line of 100.00 whose last 6 hours fall outside the window
    add_line(
        warehouse,
        "day",
        {},
        "100",
        "99.99",
        ResourceId="vol-1",
        ChargePeriodStart=datetime(2026, 10, 5),
        ChargePeriodEnd=datetime(2026, 10, 6),
    )
    allocate_period(warehouse, PERIOD, DEFAULT_DIMENSIONS)
    assert parts(warehouse, "day") == [
        ("r1", "registry", "registry vol-*", Decimal("0.75"), Decimal(75), Decimal("74.9925"), Decimal(6)),
        (None, "unattributed", "outside registry window", Decimal("0.25"), Decimal(25), Decimal("24.9975"), Decimal(2)),
    ]


def test_registered_storage_after_the_window_stays_the_runs(warehouse: duckdb.DuckDBPyConnection) -> None:
    register(
        warehouse,
        RegisteredRun(id="r1", start=datetime(2026, 10, 1), end=datetime(2026, 10, 5, 18), resources=["ckpt-*"]),
        RegisteredRun(id="r2", start=datetime(2026, 10, 20), end=datetime(2026, 10, 25), resources=["ckpt-*"]),
    )

    def storage_line(key: str, start: datetime, end: datetime, category: str = "storage") -> None:
        add_line(
            warehouse,
            key,
            {},
            "100",
            "100",
            ResourceId="ckpt-1",
            ChargePeriodStart=start,
            ChargePeriodEnd=end,
            x_CostCategory=category,
            x_GpuHours=Decimal(0),
        )

    storage_line("edge", datetime(2026, 10, 5), datetime(2026, 10, 6))  # its last 6 hours after the window
    storage_line("after", datetime(2026, 10, 12), datetime(2026, 10, 13))
    storage_line("next-run", datetime(2026, 10, 19, 12), datetime(2026, 10, 20, 12))  # r2's window starts
    storage_line("requests", datetime(2026, 10, 12), datetime(2026, 10, 13), category="other")
    allocate_period(warehouse, PERIOD, DEFAULT_DIMENSIONS)
    build_summaries(warehouse)

    assert sorted(parts(warehouse, "edge")) == [
        ("r1", "registry", "registry after window", Decimal("0.25"), Decimal(25), Decimal(25), Decimal(0)),
        ("r1", "registry", "registry ckpt-*", Decimal("0.75"), Decimal(75), Decimal(75), Decimal(0)),
    ]
    assert parts(warehouse, "after") == [
        ("r1", "registry", "registry after window", Decimal(1), Decimal(100), Decimal(100), Decimal(0))
    ]
    # r1 holds the bucket until the next run's window starts: r2's from then on
    assert parts(warehouse, "next-run") == [
        ("r1", "registry", "registry after window", Decimal("0.5"), Decimal(50), Decimal(50), Decimal(0)),
        ("r2", "registry", "registry ckpt-*", Decimal("0.5"), Decimal(50), Decimal(50), Decimal(0)),
    ]
    # only storage outlives the window: other spend of the resource stays unattributed, the one
    # line on the worklist
    assert parts(warehouse, "requests") == [
        (None, "unattributed", "outside registry window", Decimal(1), Decimal(100), Decimal(100), Decimal(0))
    ]
    worklist = warehouse.execute("select resource, effective_cost from unattributed_costs").fetchall()
    assert worklist == [("ckpt-1", Decimal(100))]
    (check,) = check_period(warehouse, PERIOD)
    assert check["unbalanced_line_items"] == 0


def test_several_matching_runs_split_by_weight_exactly(warehouse: duckdb.DuckDBPyConnection) -> None:
    register(
        warehouse,
        RegisteredRun(id="a", resources=["i-shared*"], weight=1),
        RegisteredRun(id="b", resources=["i-shared*"], weight=1),
        RegisteredRun(id="c", resources=["i-shared"], weight=1),
        RegisteredRun(id="d", resources=["i-shared"], weight=2),
    )
    add_line(warehouse, "shared", {}, "10", "-0.0000000007", ResourceId="i-shared")
    allocate_period(warehouse, PERIOD, DEFAULT_DIMENSIONS)
    result = parts(warehouse, "shared")
    assert [p[0] for p in result] == ["a", "b", "c", "d"]
    assert [p[3] for p in result] == [Decimal("0.2"), Decimal("0.2"), Decimal("0.2"), Decimal("0.4")]
    assert [p[4] for p in result] == [Decimal(2), Decimal(2), Decimal(2), Decimal(4)]
    # -7e-10 cannot split evenly: largest remainder keeps the sum exact
    assert sum(p[5] for p in result) == Decimal("-0.0000000007")
    # floors 1, 1, 1, 2 units; the 2 left go to d (remainder .8), then a (ties at .4 by run id)
    assert [p[5] for p in result] == [Decimal("-2E-10"), Decimal("-1E-10"), Decimal("-1E-10"), Decimal("-3E-10")]
    (check,) = check_period(warehouse, PERIOD)
    assert check["unbalanced_line_items"] == 0


def test_a_tiny_weight_alone_takes_the_whole_line(warehouse: duckdb.DuckDBPyConnection) -> None:
    register(warehouse, RegisteredRun(id="probe", resources=["i-eval"], weight=Decimal("0.00001")))
    add_line(warehouse, "eval", {}, "100", "99.99", ResourceId="i-eval")
    allocate_period(warehouse, PERIOD, DEFAULT_DIMENSIONS)
    assert parts(warehouse, "eval") == [
        ("probe", "registry", "registry i-eval", Decimal(1), Decimal(100), Decimal("99.99"), Decimal(8))
    ]


def test_a_tiny_weight_beside_another_gets_its_exact_share(warehouse: duckdb.DuckDBPyConnection) -> None:
    register(
        warehouse,
        RegisteredRun(id="main", resources=["i-eval"], weight=Decimal(1)),
        RegisteredRun(id="probe", resources=["i-eval"], weight=Decimal("0.00001")),
    )
    add_line(warehouse, "eval", {}, "100", "99.99", ResourceId="i-eval")
    allocate_period(warehouse, PERIOD, DEFAULT_DIMENSIONS)
    result = parts(warehouse, "eval")
    # 1 : 0.00001 is 100000 : 1 of 100001; 100 x 1/100001 = 0.00099999000009..., floored to 1e-10
    # and the unit left over goes to the larger remainder
    assert result == [
        (
            "main",
            "registry",
            "registry i-eval",
            Decimal("0.9999900001"),
            Decimal("99.9990000100"),
            Decimal("99.9890001100"),
            Decimal("7.9999200008"),
        ),
        (
            "probe",
            "registry",
            "registry i-eval",
            Decimal("0.0000099999"),
            Decimal("0.0009999900"),
            Decimal("0.0009998900"),
            Decimal("0.0000799992"),
        ),
    ]
    assert [sum(column) for column in list(zip(*result))[3:]] == [1, 100, Decimal("99.99"), 8]
    (check,) = check_period(warehouse, PERIOD)
    assert check["unbalanced_line_items"] == 0


def test_three_way_split_of_a_cent_sums_exactly(warehouse: duckdb.DuckDBPyConnection) -> None:
    register(warehouse, *[RegisteredRun(id=f"r{i}", resources=["bucket"]) for i in range(3)])
    add_line(warehouse, "cent", {}, "0.01", "0.01", ResourceId="bucket", x_GpuHours=Decimal(0))
    allocate_period(warehouse, PERIOD, DEFAULT_DIMENSIONS)
    result = parts(warehouse, "cent")
    assert sum(p[3] for p in result) == 1 and sum(p[4] for p in result) == Decimal("0.01")
    assert sorted(p[4] for p in result) == [Decimal("0.0033333333"), Decimal("0.0033333333"), Decimal("0.0033333334")]
