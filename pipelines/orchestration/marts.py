"""A mart declared once: the public table a step rebuilds whole from other tables, and everything
made from its declaration — the Dagster asset with its deps, checks and description, the skip
when its inputs are unchanged (`step_inputs`), the rows it reports and its Markdown previews.

A layer declares each of its marts with `Mart(...)` and publishes `mart.asset()`; the asset's
deps are the assets holding the tables it reads (`inputs`) and the gates it waits for (`after`,
e.g. `reconciliation`), so every edge of the graph is a data dependency. docs/warehouse.md
documents each table's columns from the schema (`python -m pipelines.reference`), and a unit
test holds every declared mart, its inputs and its preview columns to it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any

import dagster as dg
import duckdb

from pipelines.config import RunLedgerConfig
from pipelines.orchestration.resources import WAREHOUSE_POOL, RunLedgerResource
from pipelines.orchestration.tables import holds_tables
from pipelines.warehouse.connection import MACROS, transactions
from pipelines.warehouse.sql import dict_rows, read_sql
from pipelines.warehouse.step_inputs import StepInputs, build_if_changed, concluded_if_changed, tables_inputs

Upstream = dg.AssetsDefinition | dg.AssetKey


class Format(Enum):
    """How a preview shows a value (None always as an empty cell), and whether its column is
    right-aligned."""

    TEXT = ("{}", False)
    COUNT = ("{:,}", True)
    AMOUNT = ("{:,.2f}", True)
    SHARE = ("{:.1%}", True)
    SHARE_2 = ("{:.2%}", True)
    MONTH = ("{:%Y-%m}", False)
    MINUTE = ("{:%Y-%m-%d %H:%M}", False)

    def __init__(self, pattern: str, right: bool) -> None:
        self.pattern = pattern
        self.right = right


@dataclass(frozen=True)
class Column:
    """A column of a Markdown preview.

    Attributes:
        name: the column of the preview statement's rows.
        header: its heading in the table.
        format: how its values are shown.
        unit: a column whose value follows each value (e.g. the currency of an amount).
    """

    name: str
    header: str
    format: Format = Format.TEXT
    unit: str | None = None

    def cell(self, row: Mapping[str, object]) -> str:
        value = row[self.name]
        if value is None:
            return ""
        text = self.format.pattern.format(value)
        return f"{text} {row[self.unit]}" if self.unit else text


def markdown_table(columns: Sequence[Column], rows: Sequence[Mapping[str, object]]) -> str:
    """A Markdown table of `rows` (dicts by column name, as `dict_rows` reads them) showing `columns`."""
    header = "| " + " | ".join(column.header for column in columns) + " |"
    rule = "|" + "|".join("---:" if column.format.right else "---" for column in columns) + "|"
    lines = ["| " + " | ".join(column.cell(row) for column in columns) + " |" for row in rows]
    return "\n".join([header, rule, *lines])


@dataclass(frozen=True)
class Preview:
    """A Markdown table of the asset's metadata: the rows of one named statement.

    Attributes:
        key: its metadata key.
        sql: the statement, (`sql/` file, name).
        columns: the columns shown, read by name.
    """

    key: str
    sql: tuple[str, str]
    columns: tuple[Column, ...]

    def render(self, conn: duckdb.DuckDBPyConnection, params: Mapping[str, object] | None = None) -> str:
        return markdown_table(self.columns, dict_rows(conn.execute(read_sql(*self.sql), dict(params or {}))))


@dataclass(frozen=True)
class Reads:
    """The tables a mart reads from one upstream asset (its own-named table unless listed)."""

    upstream: Upstream
    tables: tuple[str, ...]


def reads(upstream: Upstream, *tables: str) -> Reads:
    """`upstream`'s tables a mart reads: those given, else the one named like the asset."""
    key = upstream if isinstance(upstream, dg.AssetKey) else upstream.key
    return Reads(upstream, tables or (key.path[-1],))


@dataclass(frozen=True)
class Check:
    """An asset check of a mart, evaluated on its connection after the build.

    Attributes:
        name: the check's name.
        description: what it checks, as the Dagster UI shows it.
        result: its result from the warehouse connection and the configuration.
        parameters: what the result takes from the configuration (JSON-serializable). Given, the
            check reads only its mart's table and inputs and the mart's SQL: it runs only when
            those or the parameters changed, and a night they are unchanged shows its last
            result again (`step_inputs`, step `<mart>.<check>`).
    """

    name: str
    description: str
    result: Callable[[duckdb.DuckDBPyConnection, RunLedgerConfig], dg.AssetCheckResult]
    parameters: Callable[[RunLedgerConfig], Mapping[str, object]] | None = None

    def evaluate(self, conn: duckdb.DuckDBPyConnection, config: RunLedgerConfig, mart: Mart) -> dg.AssetCheckResult:
        """The check's result: run now, or the last one while what it reads is unchanged."""
        if self.parameters is None:
            return self.result(conn, config)
        for attempt in transactions(conn):
            with attempt:
                inputs = tables_inputs(
                    conn,
                    f"{mart.name}.{self.name}",
                    (mart.name, *mart.input_tables),
                    mart.sql_files,
                    self.parameters(config),
                )
                outcome, _ = concluded_if_changed(conn, inputs, lambda: (self.outcome(conn, config), True))
        return self.restore(outcome)

    def restore(self, outcome: str) -> dg.AssetCheckResult:
        """The check's result from the text `outcome` made of it."""
        kept = dg.deserialize_value(outcome, as_type=dict)
        return dg.AssetCheckResult(
            check_name=self.name,
            passed=kept["passed"],
            severity=dg.AssetCheckSeverity(kept["severity"]),
            description=kept["description"],
            metadata=kept["metadata"],
        )

    def outcome(self, conn: duckdb.DuckDBPyConnection, config: RunLedgerConfig) -> str:
        """Runs the check: its result as the text `step_inputs` keeps."""
        result = self.result(conn, config)
        return dg.serialize_value(
            {
                "passed": result.passed,
                "severity": result.severity.value,
                "description": result.description,
                "metadata": result.metadata or {},
            }
        )


@dataclass(frozen=True)
class Mart:
    """One public table rebuilt whole by its own step.

    Attributes:
        name: the table, its asset key and its step in `step_inputs`.
        group: the asset's group (its layer).
        description: the asset's description.
        inputs: what the build reads: each upstream asset (its own-named table) or `reads(...)`.
            They are the asset's deps and, unless `digest` is given, the tables of its inputs
            digest (tables, not views: a view has no files).
        build: writes the table (and `also_writes`): `build(conn)`, or `build(conn, settings)`
            when `settings` is given; the caller owns the transaction.
        after: upstream assets the build waits for without reading them (a gate such as
            `reconciliation`).
        also_writes: further tables and views the build writes.
        sql: the `sql/` files the build runs, part of its inputs digest (default: its own
            `marts/<name>` and the macros).
        settings: what the build takes from the configuration.
        parameters: the settings as they enter the inputs digest (JSON-serializable).
        digest: the step's own inputs (`StepInputs`) from the connection and settings, in place
            of the inputs tables' files.
        count: the statement (file, name) of the `rows` it reports (default: its file's `count`).
        previews: the Markdown tables of its metadata.
        metadata: further metadata read from the connection after the build.
        checks: its asset checks.
    """

    name: str
    group: str
    description: str
    inputs: tuple[Upstream | Reads, ...]
    build: Callable[..., object]
    after: tuple[Upstream, ...] = ()
    also_writes: tuple[str, ...] = ()
    sql: tuple[str, ...] = ()
    settings: Callable[[RunLedgerConfig], Any] | None = None
    parameters: Callable[[Any], Mapping[str, object]] | None = None
    digest: Callable[[duckdb.DuckDBPyConnection, Any], StepInputs] | None = None
    count: tuple[str, str] | None = None
    previews: tuple[Preview, ...] = ()
    metadata: Callable[[duckdb.DuckDBPyConnection], dict[str, dg.MetadataValue]] | None = None
    checks: tuple[Check, ...] = ()

    @property
    def reads(self) -> tuple[Reads, ...]:
        return tuple(read if isinstance(read, Reads) else reads(read) for read in self.inputs)

    @property
    def input_tables(self) -> tuple[str, ...]:
        """Every table the build reads."""
        return tuple(table for read in self.reads for table in read.tables)

    @property
    def sql_files(self) -> tuple[str, ...]:
        return self.sql or (f"marts/{self.name}", MACROS)

    def build_if_changed(self, conn: duckdb.DuckDBPyConnection, settings: Any = None) -> bool:
        """Rebuilds the mart unless its last build came from the same inputs, and records them.

        Args:
            conn: a writable connection to the lake, inside the build's transaction.
            settings: what `settings` took from the configuration (None when it takes nothing).

        Returns:
            True when the mart was rebuilt.
        """
        if self.digest is not None:
            inputs = self.digest(conn, settings)
        else:
            parameters = self.parameters(settings) if self.parameters else None
            inputs = tables_inputs(conn, self.name, self.input_tables, self.sql_files, parameters)
        if self.settings is None:
            return build_if_changed(conn, inputs, lambda: self.build(conn))
        return build_if_changed(conn, inputs, lambda: self.build(conn, settings))

    def asset(self) -> dg.AssetsDefinition:
        """The mart's Dagster asset: it rebuilds the table in one transaction when its inputs
        changed, then reports its `rows`, whether it was `rebuilt`, its previews and checks."""
        mart = self
        deps = [read.upstream for read in self.reads] + list(self.after)

        @dg.asset(
            name=self.name,
            deps=deps,
            group_name=self.group,
            owners=["team:finops"],
            kinds={"duckdb"},
            description=self.description,
            metadata=holds_tables(
                self.name, *self.also_writes, inputs=self.input_tables if self.digest is None else ()
            ),
            pool=WAREHOUSE_POOL,
            check_specs=[
                dg.AssetCheckSpec(check.name, asset=self.name, description=check.description) for check in self.checks
            ],
        )
        def _mart(runledger: RunLedgerResource) -> dg.MaterializeResult:
            config = runledger.load_config()
            settings = mart.settings(config) if mart.settings else None
            with runledger.warehouse(config) as conn:
                for attempt in transactions(conn):
                    with attempt:
                        rebuilt = mart.build_if_changed(conn, settings)
                (rows,) = conn.execute(read_sql(*(mart.count or (f"marts/{mart.name}", "count")))).fetchone()
                metadata = {"rows": dg.MetadataValue.int(rows), "rebuilt": dg.MetadataValue.bool(rebuilt)}
                for preview in mart.previews:
                    metadata[preview.key] = dg.MetadataValue.md(preview.render(conn))
                if mart.metadata is not None:
                    metadata.update(mart.metadata(conn))
                check_results = [check.evaluate(conn, config, mart) for check in mart.checks]
            return dg.MaterializeResult(metadata=metadata, check_results=check_results or None)

        return _mart
