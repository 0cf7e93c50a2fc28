"""Column documentation written once: every table, view and column of the warehouse carries the
comment of the SQL file that creates it, an unchanged schema rewrites none, a catalog that refuses
comments on view columns (DuckLake) still gets the rest, and docs/warehouse.md is generated from
the same comments."""

import duckdb
import pytest

from pipelines.reference import warehouse_reference
from pipelines.warehouse.catalog import warehouse_catalog
from pipelines.warehouse.comments import apply_comments, execute_ddl
from pipelines.warehouse.connection import VIEWS, create_schema, create_view
from tests.support import REPO

PUBLIC = {
    "focus_line_items",
    "loads",
    "load_snapshots",
    "resource_tag_snapshots",
    "run_registry",
    "cost_allocations",
    "run_costs",
    "unattributed_costs",
    "reconciliation",
    "budget_baselines",
    "budget_variance",
    "group_budgets",
    "group_budget_variance",
    "budget_alerts",
    "alert_deliveries",
    "run_events",
    "waste",
    "waste_by_run",
    "run_progress",
    "run_pricing",
    "variance_causes",
    "provisional_spend",
    "commitment_utilization",
    "cluster_usage",
    "cluster_utilization",
    "run_cluster_share",
    "run_costs_fully_loaded",
    "gpu_utilization",
    "gpu_utilization_runs",
    "run_utilization",
    "recommendations",
    "recommendations_left_out",
}
BOOKKEEPING = {
    "step_inputs",
    "schema_version",
    "lake_owners",
    "cluster_intervals",
    "cluster_nodes",
    "cluster_node_tags",
}
VIEW_NAMES = {view.rsplit("/", 1)[1] for view in VIEWS}


class RecordingConnection:
    """A warehouse connection that records every statement text it executes and refuses the
    statements `refuse` says it refuses, as a catalog without support for them does."""

    def __init__(self, conn: duckdb.DuckDBPyConnection, refuse=lambda sql: False) -> None:
        self.conn = conn
        self.refuse = refuse
        self.executed: list[str] = []

    def execute(self, statement, parameters=None):
        sql = statement if isinstance(statement, str) else statement.query
        if self.refuse(sql):
            raise duckdb.BinderException("Cannot comment on columns for entry - it is not a table")
        self.executed.append(sql.strip())
        return self.conn.execute(statement, parameters) if parameters is not None else self.conn.execute(statement)

    def __getattr__(self, name: str):
        return getattr(self.conn, name)


def comments(conn) -> dict[tuple[str, str | None], str | None]:
    rows = conn.execute(
        "select table_name, null, comment from duckdb_tables() where database_name = current_database() "
        "union all select view_name, null, comment from duckdb_views() "
        "where database_name = current_database() and not internal "
        "union all select table_name, column_name, comment from duckdb_columns() "
        "where database_name = current_database()"
    ).fetchall()
    return {(relation, column): comment for relation, column, comment in rows}


def commented_relations(executed: list[str]) -> set[str]:
    """The tables and views the `comment on` statements among `executed` write to."""
    return {sql.split()[3].split(".")[0] for sql in executed if sql.lower().startswith("comment on")}


def test_every_table_view_and_column_is_documented() -> None:
    catalog = warehouse_catalog()
    assert set(catalog) == PUBLIC | BOOKKEEPING
    assert {name for name, relation in catalog.items() if relation.kind == "view"} == VIEW_NAMES
    for name, relation in catalog.items():
        assert len(relation.description) > 60, name
        assert relation.columns, name
        for column in relation.columns:
            assert column.description.endswith("."), f"{name}.{column.name}: {column.description!r}"
    money = [
        column
        for relation in catalog.values()
        for column in relation.columns
        if column.name.endswith("_cost") or column.name in {"BilledCost", "EffectiveCost", "ListCost"}
    ]
    assert money and {column.data_type for column in money} == {"DECIMAL(38,10)"}


def test_the_warehouse_holds_every_comment_and_an_unchanged_schema_rewrites_none() -> None:
    conn = duckdb.connect()
    create_schema(conn)
    stored = comments(conn)
    catalog = warehouse_catalog()
    documented = {(name, None): relation.description for name, relation in catalog.items()}
    for name, relation in catalog.items():
        documented |= {(name, column.name): column.description for column in relation.columns}
    assert stored == documented

    recording = RecordingConnection(conn)
    create_schema(recording)
    # tables keep their comments; replacing a view drops its own, so those are written again
    assert commented_relations(recording.executed) == VIEW_NAMES
    recording.executed.clear()
    create_view(recording, "marts/reconciliation")
    assert commented_relations(recording.executed) == {"reconciliation"}
    assert comments(conn) == stored


def test_a_catalog_refusing_view_column_comments_keeps_every_other_comment() -> None:
    def view_column(sql: str) -> bool:
        words = sql.split()
        return words[:3] == ["comment", "on", "column"] and words[3].split(".")[0] in VIEW_NAMES

    conn = duckdb.connect()
    create_schema(RecordingConnection(conn, refuse=view_column))
    stored = comments(conn)
    catalog = warehouse_catalog()
    for name, relation in catalog.items():
        assert stored[(name, None)] == relation.description, name
        for column in relation.columns:
            expected = None if name in VIEW_NAMES else column.description
            assert stored[(name, column.name)] == expected, f"{name}.{column.name}"


@pytest.mark.parametrize("target", ["loads.no_such_column", "run_costs.no_such_column", "no_such_table.status"])
def test_a_comment_naming_no_column_fails(target: str) -> None:
    conn = duckdb.connect()
    create_schema(conn)
    with pytest.raises(duckdb.Error, match="no_such"):
        apply_comments(conn, execute_ddl(conn, f"comment on column {target} is 'a typo';"))


def test_docs_warehouse_md_is_generated_from_the_comments() -> None:
    committed = (REPO / "docs/warehouse.md").read_text()
    assert committed == warehouse_reference(), "regenerate it: python -m pipelines.reference > docs/warehouse.md"
    assert "## cost_allocations" in committed and "`allocation_ratio` | `DECIMAL(38,10) NOT NULL`" in committed
