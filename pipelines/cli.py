"""`runledger`: the command line. Exit 0 ok, 1 run failed, 2 usage or config error."""

from __future__ import annotations

import csv
import json
import re
import sys
from collections.abc import Callable, Sequence
from datetime import date
from decimal import Decimal
from functools import wraps
from pathlib import Path
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    import duckdb

    from pipelines.budgets.pilot import ScaledEstimate

RUN_FAILED = 1
USAGE_ERROR = 2


def _echo_err(message: str) -> None:
    click.echo(message, err=True)


def _handle_errors(command: Callable) -> Callable:
    """Maps errors to exit codes: configuration and usage 2, everything else that fails 1."""

    @wraps(command)
    def wrapper(*args: object, **kwargs: object) -> object:
        from pipelines.budgets.files import BudgetError
        from pipelines.budgets.pilot import PilotError
        from pipelines.config_rules import ConfigError
        from pipelines.export import NothingToExport
        from pipelines.query import QueryRefused
        from pipelines.sources.mappings import MappingError
        from pipelines.warehouse.lake import LakeError
        from pipelines.warehouse.sandbox import SandboxUnavailable

        try:
            return command(*args, **kwargs)
        except (
            ConfigError,
            BudgetError,
            PilotError,
            MappingError,
            NothingToExport,
            UsageProblem,
            LakeError,
            QueryRefused,
            SandboxUnavailable,
        ) as error:
            _echo_err(f"error: {error}")
            sys.exit(USAGE_ERROR)
        except Exception as error:  # noqa: BLE001 - every other failure is a failed run, exit 1
            _echo_err(f"run failed: {error}")
            sys.exit(RUN_FAILED)

    return wrapper


class UsageProblem(ValueError):
    """A command was called in a way it cannot serve (exit 2)."""


def _config_option(command: Callable) -> Callable:
    return click.option(
        "--config",
        "config_path",
        type=click.Path(path_type=Path, dir_okay=False),
        default=None,
        help="runledger.yaml to use (default: $RUNLEDGER_CONFIG, then ./runledger.yaml).",
    )(command)


# A billing period as `runledger run --period` takes it: YYYY-MM, or Dagster's partition key YYYY-MM-01.
BILLING_PERIOD = re.compile(r"^(?P<year>\d{4})-(?P<month>\d{2})(-01)?$")


def _parse_period(value: str) -> date:
    """A `--period` value as the first day of its month.

    Raises:
        UsageProblem: neither YYYY-MM nor YYYY-MM-01 with a month from 01 to 12, or a period
            without a partition.
    """
    from pipelines.orchestration.partitions import unpartitioned_reason

    match = BILLING_PERIOD.match(value)
    if match is None or not 1 <= int(match["month"]) <= 12:
        raise UsageProblem(
            f"--period {value!r} is not a billing period: give YYYY-MM (e.g. 2026-11) "
            "or its Dagster partition key YYYY-MM-01 (e.g. 2026-11-01)"
        )
    period = date(int(match["year"]), int(match["month"]), 1)
    reason = unpartitioned_reason(period)
    if reason is not None:
        raise UsageProblem(f"--period {value}: {reason}")
    return period


def _print_table(columns: list[str], rows: list[tuple]) -> None:
    from pipelines.warehouse.decimal_text import as_text, column_places, plain

    places = [column_places(row[i] for row in rows if isinstance(row[i], Decimal)) for i in range(len(columns))]
    cells = [
        [
            "" if v is None else plain(v, p, grouped=True) if isinstance(v, Decimal) else as_text(v)
            for v, p in zip(row, places)
        ]
        for row in rows
    ]
    widths = [max([len(c)] + [len(r[i]) for r in cells]) for i, c in enumerate(columns)]
    numeric = [
        all(isinstance(row[i], int | float | Decimal) or row[i] is None for row in rows) for i in range(len(columns))
    ]

    def line(values: list[str]) -> str:
        return "  ".join(v.rjust(w) if n else v.ljust(w) for v, w, n in zip(values, widths, numeric)).rstrip()

    click.echo(line(columns))
    click.echo("  ".join("-" * w for w in widths))
    for row in cells:
        click.echo(line(row))


class _TerminalProgress:
    """A progress bar of the run's stages on the last line of a terminal's stderr; the stage lines
    scroll above it. Only for a terminal: a log or a pipe gets the stage lines alone."""

    WIDTH = 30

    def __init__(self) -> None:
        self._bar = ""

    def echo(self, line: str) -> None:
        self._clear()
        click.echo(line, err=True)
        self._draw()

    def update(self, done: int, total: int, stage: str) -> None:
        filled = self.WIDTH * done // max(total, 1)
        self._clear()
        self._bar = f"[{'#' * filled}{'-' * (self.WIDTH - filled)}] {done}/{total} stages: {stage}"
        self._draw()

    def close(self) -> None:
        self._clear()
        self._bar = ""

    def _clear(self) -> None:
        if self._bar:
            click.echo("\r\x1b[K", err=True, nl=False)

    def _draw(self) -> None:
        if self._bar:
            click.echo(self._bar, err=True, nl=False)


def _run_nightly(config_path: Path | None, periods: Sequence[date] = (), full_refresh: bool = False) -> list[str]:
    """The nightly job with its stage lines on stderr, under a progress bar when stderr is a
    terminal; the reports written."""
    from pipelines.nightly import run_nightly

    if not sys.stderr.isatty():
        return run_nightly(config_path, periods, echo=_echo_err, full_refresh=full_refresh).reports
    bar = _TerminalProgress()
    try:
        return run_nightly(config_path, periods, echo=bar.echo, full_refresh=full_refresh, progress=bar.update).reports
    finally:
        bar.close()


def _print_summary(config_path: Path | None, reports: list[str]) -> None:
    from pipelines.config import load_config
    from pipelines.warehouse.connection import connect_read_only
    from pipelines.warehouse.sql import read_sql

    config = load_config(config_path)
    conn = connect_read_only(config.lake)
    try:
        cursor = conn.execute(read_sql("reports/run_summary"))
        columns = [d[0] for d in cursor.description]
        rows = cursor.fetchall()
        alerts = conn.execute(read_sql("marts/budget_alerts", "summary"))
        alert_columns = [d[0] for d in alerts.description]
        alert_rows = alerts.fetchall()
        waste = conn.execute(read_sql("marts/waste", "run_summary"))
        waste_columns = [d[0] for d in waste.description]
        waste_rows = waste.fetchall()
        whys = _why_paragraphs(conn, [row[0] for row in rows])
        provisional = conn.execute(read_sql("marts/provisional_spend", "provisional"))
        provisional_columns = [d[0] for d in provisional.description]
        provisional_rows = provisional.fetchall()
    finally:
        conn.close()
    click.echo("")
    _print_table(columns, rows)
    click.echo("")
    if alert_rows:
        click.echo("budget alerts (first day the cumulative effective spend reached the threshold):")
        _print_table(alert_columns, alert_rows)
    else:
        click.echo("budget alerts: no run reached its warning or over threshold")
    click.echo("")
    if waste_rows:
        click.echo("waste (an analysis of the attributed spend above; it does not change it):")
        _print_table(waste_columns, waste_rows)
    else:
        click.echo("waste: none found (see README, Waste, for what each kind needs)")
    if whys:
        click.echo("")
        click.echo("why (each run's variance and its three largest causes):")
        for training_run, why in whys:
            click.echo(f"{training_run}: {why}")
    if provisional_rows:
        click.echo("")
        click.echo("provisional spend (estimated from run events since the newest billed hour, not billed yet):")
        _print_table(provisional_columns, provisional_rows)
    click.echo("")
    click.echo(f"warehouse: {config.lake.describe()}")
    summary = [p for p in reports if p.endswith("summary.html")]
    html = [p for p in reports if p.endswith("report.html")]
    click.echo(f"reports:   {summary[0] if summary else config.reports_path}")
    for path in html:
        click.echo(f"           {path}")


def _why_paragraphs(conn: duckdb.DuckDBPyConnection, training_runs: list[str]) -> list[tuple[str, str]]:
    """Each budgeted run's "why" paragraph, as its report opens with it, in the order given."""
    from pipelines.reports.data import known_runs, load_overviews
    from pipelines.reports.run_causes import why_paragraph

    known = set(known_runs(conn))
    overviews = load_overviews(conn, [training_run for training_run in training_runs if training_run in known])
    return [(training_run, why) for training_run, overview in overviews.items() if (why := why_paragraph(overview))]


@click.group(
    help="RunLedger: cloud bills to per-training-run cost accounts.",
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.version_option(package_name="runledger", message="runledger %(version)s", help="Print the version and exit.")
def main() -> None:
    """The `runledger` command group."""


@main.command(help="Write the demo exports and config into DIR (default: .), run the nightly job, report.")
@click.option(
    "--dir",
    "target",
    type=click.Path(path_type=Path, file_okay=False),
    default=Path("."),
    show_default=True,
    help="Folder to write the demo into.",
)
@_handle_errors
def demo(target: Path) -> None:
    from pipelines.demo import write_demo

    config_path = write_demo(target)
    click.echo(f"demo data and config written: {config_path}")
    _print_summary(config_path, _run_nightly(config_path))


@main.command(help="The nightly job: ingest, normalize, attribute, budget variance, reports.")
@_config_option
@click.option(
    "--period",
    "periods",
    multiple=True,
    help="Billing period YYYY-MM, or its partition key YYYY-MM-01 (repeatable; default: every period found).",
)
@click.option(
    "--full-refresh",
    is_flag=True,
    help="Re-read the periods from the BigQuery export whatever its export_time watermark says (repairs).",
)
@_handle_errors
def run(config_path: Path | None, periods: tuple[str, ...], full_refresh: bool) -> None:
    reports = _run_nightly(config_path, [_parse_period(p) for p in periods], full_refresh)
    _print_summary(config_path, reports)


_AT_HELP = "A snapshot id of the lake or a moment (ISO-8601, UTC unless given): the warehouse as it was then."


@main.command(help='Read-only SQL on the warehouse, e.g. runledger query "select * from run_costs".')
@_config_option
@click.option(
    "--format",
    "output_format",
    type=click.Choice(["table", "csv", "json"]),
    default="table",
    show_default=True,
    help="How to print the rows.",
)
@click.option("--at", "at", help=_AT_HELP)
@click.argument("sql")
@_handle_errors
def query(config_path: Path | None, output_format: str, at: str | None, sql: str) -> None:
    from pipelines.config import load_config
    from pipelines.query import parse_moment, query_lake
    from pipelines.warehouse.decimal_text import as_text

    config = load_config(config_path)
    table = query_lake(config.lake, sql, parse_moment(at) if at else None)
    columns = table.column_names
    rows = [tuple(row.values()) for row in table.to_pylist(maps_as_pydicts="strict")]
    if output_format == "csv":
        writer = csv.writer(sys.stdout)
        writer.writerow(columns)
        writer.writerows([None if v is None else as_text(v) for v in row] for row in rows)
    elif output_format == "json":
        click.echo(json.dumps([dict(zip(columns, row)) for row in rows], default=as_text, indent=2))
    else:
        _print_table(columns, rows)


@main.group(help="Datasets from the warehouse for other tools.")
def export() -> None:
    """The `runledger export` command group."""


@export.command(
    "focus",
    help=(
        "A billing period of the warehouse as a FOCUS 1.2 dataset: one file per billing source, "
        "<source>-<YYYY-MM>.parquet (or .csv) in --out, every FOCUS column in the specification's order, "
        "the x_ columns after them."
    ),
)
@_config_option
@click.option("--period", "period", required=True, help="Billing period YYYY-MM, or its partition key YYYY-MM-01.")
@click.option(
    "--out",
    required=True,
    type=click.Path(path_type=Path, file_okay=False),
    help="Folder to write into (created when missing; files of the same name are replaced).",
)
@click.option(
    "--format",
    "export_format",
    type=click.Choice(["parquet", "csv"]),
    default="parquet",
    show_default=True,
    help="Parquet (typed: DECIMAL money, UTC timestamps) or CSV (text).",
)
@click.option("--source", "source_name", help="Only this billing source (sources[].name; default: every source).")
@_handle_errors
def export_focus(config_path: Path | None, period: str, out: Path, export_format: str, source_name: str | None) -> None:
    from pipelines.config import load_config
    from pipelines.export import export_focus as write_focus_dataset
    from pipelines.warehouse.connection import connect_read_only

    billing_period = _parse_period(period)
    config = load_config(config_path)
    conn = connect_read_only(config.lake)
    try:
        written = write_focus_dataset(conn, billing_period, out, export_format, source_name)
    finally:
        conn.close()
    for file in written:
        click.echo(f"{file.path}  ({file.source_name}: {file.line_items:,} line items)")


@main.command(help="Post-mortem reports for one run (--run) or all runs (--all) from the warehouse.")
@_config_option
@click.option("--run", "run_id", help="Training run id.")
@click.option("--all", "all_runs", is_flag=True, help="Every run.")
@click.option(
    "--out",
    type=click.Path(path_type=Path, file_okay=False),
    help="Output folder (default: reports_dir; required with --at).",
)
@click.option("--at", "at", help=_AT_HELP)
@click.option(
    "--png",
    is_flag=True,
    help="Also draw each chart as charts/<chart>.png (2x) and show the PNGs in report.md, for Markdown "
    "viewers without SVG images (slower: rasterizing doubles the drawing).",
)
@_handle_errors
def report(
    config_path: Path | None, run_id: str | None, all_runs: bool, out: Path | None, at: str | None, png: bool
) -> None:
    from pipelines.config import load_config
    from pipelines.query import parse_moment
    from pipelines.reports import write_reports
    from pipelines.warehouse.connection import connect_read_only

    if bool(run_id) == all_runs:
        raise UsageProblem("give exactly one of --run RUN_ID or --all")
    if at and out is None:
        raise UsageProblem("give --out DIR with --at: the reports of an earlier snapshot would replace today's")
    config = load_config(config_path)
    conn = connect_read_only(config.lake, parse_moment(at) if at else None)
    try:
        try:
            written = write_reports(conn, out or config.reports_path, [run_id] if run_id else None, png=png)
        except ValueError as error:
            raise UsageProblem(str(error)) from None
    finally:
        conn.close()
    for path in written.paths:
        if str(path).endswith((".html", ".md")):
            click.echo(str(path))
    _echo_err(written.rendered_line)


@main.command(help="Convert a warehouse file of an earlier RunLedger into the lake, once (the file is kept).")
@_config_option
@_handle_errors
def migrate(config_path: Path | None) -> None:
    from pipelines.config import load_config
    from pipelines.warehouse.migrate import migrate as migrate_file

    config = load_config(config_path)
    lake = config.lake
    result = migrate_file(lake)
    for table, rows in result.rows.items():
        click.echo(f"  {table}: {rows:,} rows")
    click.echo(f"converted {result.source} into {result.lake.describe()} (the file is kept as it was)")
    if result.lake.sqlite_file is not None and result.lake.sqlite_file != lake.sqlite_file:
        click.echo(
            f"now point runledger.yaml at the lake: warehouse: {config.relative(result.lake.sqlite_file.parent)}"
        )


def _decimal_option(context: click.Context, parameter: click.Parameter, value: str | None) -> Decimal | None:
    from decimal import InvalidOperation

    if value is None:
        return None
    try:
        number = Decimal(value)
    except InvalidOperation:
        raise click.BadParameter(f"not a number: {value!r} (e.g. 13e9)") from None
    if not number.is_finite():
        raise click.BadParameter(f"not a finite number: {value!r}")
    return number


_SCALING_OPTIONS = ("parameters", "active_parameters", "method", "tokens", "gpus", "scaling_efficiency")


@main.command(
    help=(
        "Print the pre-training estimate of BUDGET_FILE from the resource model; or, with --from-run PILOT, "
        "write the budget of a larger run scaled from a finished pilot's measured throughput, overhead and "
        "rates (the budget YAML on stdout, or into --out with the explanation on stdout). Options not given "
        "keep the pilot's values."
    )
)
@click.argument("budget_file", required=False, type=click.Path(path_type=Path, dir_okay=False))
@click.option("--from-run", "pilot", metavar="PILOT", help="A finished run with progress in the warehouse.")
@_config_option
@click.option("--training-run", help="The new run's id (default: PILOT-scaled).")
@click.option("--parameters", callback=_decimal_option, metavar="N", help="Parameters of the new model, e.g. 13e9.")
@click.option(
    "--active-parameters",
    callback=_decimal_option,
    metavar="N",
    help="Parameters used per token of a mixture of experts (e.g. 12.9e9 of 46.7e9).",
)
@click.option("--method", type=click.Choice(["pretrain", "sft", "dpo", "lora"]), help="Training method.")
@click.option("--tokens", callback=_decimal_option, metavar="D", help="Tokens the new run processes, e.g. 1.3e12.")
@click.option("--gpus", type=click.IntRange(min=1), help="GPUs of the new run.")
@click.option(
    "--scaling-efficiency",
    callback=_decimal_option,
    metavar="E",
    help="Throughput per GPU kept against the pilot's, in (0, 1] (default: 0.9 with more GPUs than the pilot, else 1).",
)
@click.option(
    "--start",
    type=click.DateTime(formats=["%Y-%m-%d"]),
    help="First day of the new run's window (default: today, UTC).",
)
@click.option("--out", type=click.Path(path_type=Path, dir_okay=False), help="Write the budget YAML here.")
@_handle_errors
def estimate(budget_file: Path | None, pilot: str | None, config_path: Path | None, **options: object) -> None:
    from pipelines.budgets.estimate import estimate as estimate_budget
    from pipelines.budgets.estimate_text import format_estimate
    from pipelines.budgets.files import load_budget

    if (budget_file is None) == (pilot is None):
        raise UsageProblem("give exactly one of BUDGET_FILE or --from-run PILOT")
    if pilot is None:
        given = [f"--{name.replace('_', '-')}" for name, value in options.items() if value is not None]
        if given or config_path is not None:
            raise UsageProblem(f"{', '.join(given or ['--config'])}: only with --from-run PILOT")
        budget = load_budget(budget_file)
        click.echo(format_estimate(budget, estimate_budget(budget)))
        return
    scaled = _scaled_estimate(pilot, config_path, options)
    out = options["out"]
    if out is None:
        click.echo(scaled.yaml_text(), nl=False)
        return
    out.write_text(scaled.yaml_text(), encoding="utf-8")
    click.echo(scaled.text())
    click.echo(f"budget written: {out}")


def _scaled_estimate(pilot: str, config_path: Path | None, options: dict[str, object]) -> ScaledEstimate:
    """`runledger estimate --from-run`: the pilot's budget and measures, scaled to the options."""
    from datetime import UTC, datetime

    from pipelines.budgets.files import load_budgets_with_files
    from pipelines.budgets.pilot import Target, pilot_budget, read_pilot, scale_pilot
    from pipelines.config import load_config
    from pipelines.warehouse.connection import connect_read_only

    config = load_config(config_path)
    budgets = load_budgets_with_files(config.budgets_path) if config.budgets_path else []
    if not config.lake.exists():
        raise UsageProblem(f"{config.lake.describe()} does not exist yet: run `runledger run` first")
    conn = connect_read_only(config.lake)
    try:
        measures = read_pilot(conn, pilot)
    finally:
        conn.close()
    start = options["start"]
    target = Target(
        training_run=options["training_run"] or f"{pilot}-scaled",
        start=start.date() if start is not None else datetime.now(UTC).date(),
        **{name: options[name] for name in _SCALING_OPTIONS},
    )
    return scale_pilot(pilot_budget(budgets, pilot, config.budgets_path), measures, target)


@main.command(help="Validate the config, budgets, run registry, mapping and run event files without running.")
@_config_option
@_handle_errors
def check(config_path: Path | None) -> None:
    from connectors.training.event_files import read_event_files
    from pipelines.attribution.overlaps import contradictions, registry_overlaps
    from pipelines.attribution.registry import load_registry
    from pipelines.budgets.files import load_budgets_with_files, require_existing_runs
    from pipelines.budgets.tables import attributed_runs
    from pipelines.config import load_config
    from pipelines.ingest.readers import reader_for
    from pipelines.sources.manual_costs.reader import ManualCostsReader
    from pipelines.sources.mappings import read_category_rules
    from pipelines.warehouse.connection import connect_read_only

    config = load_config(config_path)
    runs = load_registry(config.runs_path) if config.runs_path else []
    budgets = load_budgets_with_files(config.budgets_path) if config.budgets_path else []
    rules = read_category_rules(config.cost_categories_path)
    readers = [reader_for(source, config) for source in config.billing_sources]
    manual_lines = sum(reader.line_count for reader in readers if isinstance(reader, ManualCostsReader))
    run_events = sum(len(read_event_files(config.resolve(s.path))) for s in config.run_events_sources if s.path)
    attributed = None
    if budgets and config.lake.exists() and not config.lake.legacy_file:
        conn = connect_read_only(config.lake)
        try:
            attributed = attributed_runs(conn)
        finally:
            conn.close()
    require_existing_runs(
        budgets,
        {run.id for run in runs},
        attributed,
        registry_file=config.runs_path,
        lake=config.lake.describe(),
    )
    click.echo(
        f"ok: {len(config.sources)} sources, {len(runs)} registered runs, {len(budgets)} budgets, "
        f"{len(rules)} cost category rules, {len(config.attribution.shared)} shared-cost rules, "
        f"{run_events} run events in files, {manual_lines} manual cost lines ({config.base_dir})"
    )
    for finding in [o.describe() for o in registry_overlaps(runs)] + contradictions(runs, config.attribution.shared):
        click.echo(f"registry {finding}")
    if config.lake.legacy_file:
        click.echo(
            f"warning: {config.lake.legacy_file} is a warehouse file of an earlier RunLedger (budgets were not checked "
            "against its spend): convert it once with `runledger migrate`"
        )
