"""One writer per table: every table and view of the warehouse is written from one layer of sql/.

Reads every statement under sql/ (but the DDL of sql/schema/) and of the source kinds'
folders (pipelines/sources/: a kind's own mapping, staging SQL kept beside its reader) and finds the tables each writes:
insert into, delete from, update, create [or replace] table/view, drop, truncate. Temporary
working tables (created `temp`) belong to the step that creates them and are not checked.
"""

import re
from collections import defaultdict
from pathlib import Path

from pipelines.warehouse.sql import SQL_DIR

SCHEMA_LAYER = "schema"
STAGING_LAYER = "staging"
SOURCES_DIR = SQL_DIR.parent / "pipelines" / "sources"
# The layer folder that writes each table and view of the warehouse.
WRITER_LAYER = {
    "focus_line_items": "staging",
    "cost_allocations": "attribution",
    "loads": "ops",
    "step_inputs": "ops",
    "schema_version": "ops",
    "lake_owners": "ops",
    "load_snapshots": "ops",
    "alert_deliveries": "ops",
    "run_registry": "inputs",
    "budget_baselines": "inputs",
    "group_budgets": "inputs",
    "run_events": "inputs",
    "resource_tag_snapshots": "inputs",
    "run_costs": "marts",
    "unattributed_costs": "marts",
    "reconciliation": "marts",
    "budget_variance": "marts",
    "group_budget_variance": "marts",
    "budget_alerts": "marts",
    "waste": "marts",
    "waste_by_run": "marts",
    "run_progress": "marts",
    "run_pricing": "marts",
    "variance_causes": "marts",
    "recommendations": "marts",
    "recommendations_left_out": "marts",
    "provisional_spend": "marts",
    "commitment_utilization": "marts",
    "cluster_intervals": "inputs",
    "cluster_nodes": "inputs",
    "cluster_node_tags": "inputs",
    "cluster_usage": "marts",
    "cluster_utilization": "marts",
    "run_cluster_share": "marts",
    "run_costs_fully_loaded": "marts",
    "gpu_utilization": "inputs",
    "gpu_utilization_runs": "marts",
    "run_utilization": "marts",
}
NAME = r"(?:\"[^\"]+\"|[\w.]+)"
WRITE = re.compile(
    rf"""\b(?:
        insert\s+(?:or\s+(?:replace|ignore)\s+)?into\s+(?P<insert>{NAME})
      | delete\s+from\s+(?P<delete>{NAME})
      | update\s+(?P<update>{NAME})\s+set\b
      | create\s+(?:or\s+replace\s+)?(?P<temporary>temp(?:orary)?\s+)?(?:table|view)\s+(?:if\s+not\s+exists\s+)?
            (?P<create>{NAME})
      | drop\s+(?:table|view)\s+(?:if\s+exists\s+)?(?P<drop>{NAME})
      | truncate\s+(?:table\s+)?(?P<truncate>{NAME})
    )""",
    re.IGNORECASE | re.VERBOSE,
)
CREATED_TABLE = re.compile(rf"\bcreate\s+table\s+if\s+not\s+exists\s+(?P<name>{NAME})", re.IGNORECASE)
# comments and string literals, which may contain any words
NOT_CODE = re.compile(r"--[^\n]*|/\*.*?\*/|'(?:[^']|'')*'", re.DOTALL)


def statement_code(path: Path) -> str:
    return NOT_CODE.sub(" ", path.read_text())


def written_tables(code: str) -> list[tuple[str, bool]]:
    """(table, created temporary) of every write in the SQL text."""
    writes = []
    for match in WRITE.finditer(code):
        groups = {key: value for key, value in match.groupdict().items() if value and key != "temporary"}
        ((_, name),) = groups.items()
        writes.append((name.strip('"').lower(), bool(match.group("temporary"))))
    return writes


def layer_name(path: Path) -> str:
    """`<layer>/<file>` of a statement file: a source kind's SQL is of the staging layer."""
    if path.is_relative_to(SOURCES_DIR):
        return f"{STAGING_LAYER}/{path.relative_to(SOURCES_DIR.parent).as_posix()}"
    return path.relative_to(SQL_DIR).as_posix()


def sql_files() -> list[Path]:
    layers = (path for path in SQL_DIR.rglob("*.sql") if path.relative_to(SQL_DIR).parts[0] != SCHEMA_LAYER)
    return sorted([*layers, *SOURCES_DIR.rglob("*.sql")])


def writers_by_table() -> dict[str, set[str]]:
    """Each non-temporary table written under sql/ → the files (layer/name) writing it."""
    writes = [
        (path, table, temporary) for path in sql_files() for table, temporary in written_tables(statement_code(path))
    ]
    temporary_tables = {table for _, table, temporary in writes if temporary}
    writers: dict[str, set[str]] = defaultdict(set)
    for path, table, _ in writes:
        if table.startswith("temp.") or table in temporary_tables:
            continue
        writers[table].add(layer_name(path))
    return writers


def test_the_parser_finds_every_kind_of_write() -> None:
    code = NOT_CODE.sub(
        " ",
        """
        insert into a by name select 1;  -- delete from not_a_write
        insert or replace into b values (1);
        delete from c where x = 'update d set';
        update e set x = 1;
        create or replace view f as select 1;
        create table if not exists g (x int);
        create or replace temp table h as select 1;
        drop table if exists temp.i;
        truncate j;
        """,
    )
    assert written_tables(code) == [
        ("a", False),
        ("b", False),
        ("c", False),
        ("e", False),
        ("f", False),
        ("g", False),
        ("h", True),
        ("temp.i", False),
        ("j", False),
    ]


def test_every_table_is_written_from_one_layer() -> None:
    writers = writers_by_table()
    unknown = sorted(set(writers) - set(WRITER_LAYER))
    assert not unknown, f"tables written under sql/ without a layer in WRITER_LAYER: {unknown}"
    for table, layer in WRITER_LAYER.items():
        layers = {Path(file).parts[0] for file in writers.get(table, ())}
        files = sorted(writers.get(table, ()))
        assert layers == {layer}, f"{table} is written from {files}, not from sql/{layer}/ alone"


def test_every_table_of_the_schema_and_every_view_has_its_writer_layer() -> None:
    tables = {
        match.group("name").lower()
        for path in (SQL_DIR / SCHEMA_LAYER).glob("*.sql")
        for match in CREATED_TABLE.finditer(statement_code(path))
    }
    views = {
        table
        for path in sql_files()
        for match in WRITE.finditer(statement_code(path))
        if re.match(r"create\s+or\s+replace\s+view", match.group(0), re.IGNORECASE)
        for table in [match.group("create").lower()]
    }
    assert tables | views == set(WRITER_LAYER)
