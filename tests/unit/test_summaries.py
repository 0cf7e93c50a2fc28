"""The summary tables `run_costs` and `unattributed_costs`: rebuilt whole from the allocations by
their assets, kept when nothing they are computed from changed, and replacing the views of
earlier warehouses."""

from datetime import datetime
from decimal import Decimal

import duckdb

from pipelines.attribution.allocate import allocate_period, allocation_inputs
from pipelines.attribution.assets import RUN_COSTS_MART, UNATTRIBUTED_COSTS_MART
from pipelines.attribution.registry import RegisteredRun
from pipelines.attribution.settings import DEFAULT_DIMENSIONS
from pipelines.warehouse.connection import create_schema, transaction
from pipelines.warehouse.summaries import RUN_COSTS, UNATTRIBUTED_COSTS, build_summaries
from tests.unit.test_attribution import PERIOD, add_line, register

# run_costs per (run, category, period, currency), aggregated from cost_allocations now
ALLOCATED_RUN_COSTS = """
    select training_run, x_CostCategory, cast(date_trunc('month', BillingPeriodStart) as date), BillingCurrency,
        sum(billed_cost), sum(effective_cost), sum(gpu_hours)
    from cost_allocations where training_run is not null group by all order by all
"""
RUN_COSTS_ROWS = """
    select training_run, cost_category, billing_period, currency, billed_cost, effective_cost, gpu_hours
    from run_costs order by all
"""


def night(conn: duckdb.DuckDBPyConnection) -> dict[str, bool]:
    """A period's allocations as the nightly job makes them (inputs recorded), then each summary's
    asset step: which summaries were rebuilt."""
    inputs = allocation_inputs(conn, PERIOD, DEFAULT_DIMENSIONS)
    if not inputs.unchanged(conn):
        allocate_period(conn, PERIOD, DEFAULT_DIMENSIONS, inputs=inputs)
    rebuilt = {}
    for mart in (RUN_COSTS_MART, UNATTRIBUTED_COSTS_MART):
        with transaction(conn):
            rebuilt[mart.name] = mart.build_if_changed(conn)
    return rebuilt


def lines(conn: duckdb.DuckDBPyConnection) -> None:
    add_line(conn, "a", {"training_run": "llm-a", "owner": "dave"}, "10.5", "7.25")
    add_line(conn, "b", {"training_run": "llm-a"}, "3", "3", x_CostCategory="storage", ResourceId="vol-b")
    add_line(conn, "c", {"training_run": "llm-b"}, "4", "4")
    add_line(conn, "untagged", {}, "6", "6", ResourceId="i-orphan")
    add_line(conn, "other-account", {}, "2", "2", SubAccountId="444455556666", ResourceId="i-far")


def test_run_costs_hold_the_allocations_of_the_night_and_of_a_reattribution(
    lake_warehouse: duckdb.DuckDBPyConnection,
) -> None:
    lines(lake_warehouse)
    assert night(lake_warehouse) == {RUN_COSTS: True, UNATTRIBUTED_COSTS: True}
    assert lake_warehouse.execute(RUN_COSTS_ROWS).fetchall() == lake_warehouse.execute(ALLOCATED_RUN_COSTS).fetchall()
    by_run = dict(
        lake_warehouse.execute("select training_run, sum(effective_cost) from run_costs group by 1").fetchall()
    )
    assert by_run == {"llm-a": Decimal("10.25"), "llm-b": Decimal(4)}
    assert lake_warehouse.execute("select distinct owner from run_costs where training_run = 'llm-a'").fetchall() == [
        ("dave",)
    ]

    # the registry claims the untagged instance for llm-b: the allocations are recomputed, and so
    # are both summaries
    register(
        lake_warehouse,
        RegisteredRun(
            id="llm-b", owner="erin", start=datetime(2026, 10, 1), end=datetime(2026, 10, 31), resources=["i-orphan"]
        ),
    )
    assert night(lake_warehouse) == {RUN_COSTS: True, UNATTRIBUTED_COSTS: True}
    assert lake_warehouse.execute(RUN_COSTS_ROWS).fetchall() == lake_warehouse.execute(ALLOCATED_RUN_COSTS).fetchall()
    by_run = dict(
        lake_warehouse.execute("select training_run, sum(effective_cost) from run_costs group by 1").fetchall()
    )
    assert by_run == {"llm-a": Decimal("10.25"), "llm-b": Decimal(10)}
    assert lake_warehouse.execute("select distinct owner from run_costs where training_run = 'llm-b'").fetchall() == [
        ("erin",)
    ]
    assert lake_warehouse.execute("select resource, effective_cost from unattributed_costs").fetchall() == [
        ("i-far", Decimal(2))
    ]


def test_a_night_with_nothing_new_keeps_both_summaries(lake_warehouse: duckdb.DuckDBPyConnection) -> None:
    lines(lake_warehouse)
    night(lake_warehouse)
    run_costs = lake_warehouse.execute(RUN_COSTS_ROWS).fetchall()
    assert night(lake_warehouse) == {RUN_COSTS: False, UNATTRIBUTED_COSTS: False}
    assert lake_warehouse.execute(RUN_COSTS_ROWS).fetchall() == run_costs
    # a new line item is a new load: allocations and both summaries are built again
    add_line(lake_warehouse, "d", {"training_run": "llm-b"}, "1", "1")
    lake_warehouse.execute("delete from step_inputs where step = 'cost_allocations'")
    assert night(lake_warehouse) == {RUN_COSTS: True, UNATTRIBUTED_COSTS: True}
    by_run = dict(
        lake_warehouse.execute("select training_run, sum(effective_cost) from run_costs group by 1").fetchall()
    )
    assert by_run == {"llm-a": Decimal("10.25"), "llm-b": Decimal(5)}


def test_unattributed_costs_hold_the_spend_of_no_run_with_its_share(lake_warehouse: duckdb.DuckDBPyConnection) -> None:
    lines(lake_warehouse)
    night(lake_warehouse)
    rows = lake_warehouse.execute(
        "select account, resource, effective_cost, share_of_period, taggable from unattributed_costs order by all"
    ).fetchall()
    # the period's effective total is 22.25
    assert rows == [
        ("111122223333", "i-orphan", Decimal(6), round(6 / 22.25, 6), True),
        ("444455556666", "i-far", Decimal(2), round(2 / 22.25, 6), True),
    ]
    (unattributed,) = lake_warehouse.execute(
        "select sum(effective_cost) from cost_allocations where training_run is null"
    ).fetchone()
    assert lake_warehouse.execute("select sum(effective_cost) from unattributed_costs").fetchone() == (unattributed,)


def test_a_warehouse_of_an_earlier_version_gets_tables_for_its_views() -> None:
    conn = duckdb.connect()
    conn.execute("create view run_costs as select 1 as training_run")
    conn.execute("create view unattributed_costs as select 1 as resource")
    create_schema(conn)
    kinds = dict(
        conn.execute(
            "select table_name, table_type from information_schema.tables "
            "where table_name in ('run_costs', 'unattributed_costs')"
        ).fetchall()
    )
    assert kinds == {"run_costs": "BASE TABLE", "unattributed_costs": "BASE TABLE"}
    lines(conn)
    allocate_period(conn, PERIOD, DEFAULT_DIMENSIONS)
    with transaction(conn):
        build_summaries(conn)
    create_schema(conn)  # a table is kept, rows and all, when the schema is set up again
    assert conn.execute("select count(*) from run_costs").fetchone() == (3,)
