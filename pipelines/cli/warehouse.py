"""The commands that read the warehouse or convert it: `runledger query`, `export focus`,
`report` and `migrate`."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from pipelines.cli.common import (
    AT_HELP,
    UsageProblem,
    config_option,
    echo_err,
    handle_errors,
    load_config,
    parse_at,
    parse_period,
)
from pipelines.cli.output import print_table, write_csv, write_json

# `runledger query --timeout`'s default, in seconds (kept here, out of pipelines.query, so that
# `runledger -h` imports no DuckDB).
DEFAULT_TIMEOUT_SECONDS = 600
# A command stopped by a signal exits with 128 + the signal's number, as a shell reports it.
SIGNALLED = 128


@click.command(help='Read-only SQL on the warehouse, e.g. runledger query "select * from run_costs".')
@config_option
@click.option(
    "--format",
    "output_format",
    type=click.Choice(["table", "csv", "json"]),
    default="table",
    show_default=True,
    help="How to print the rows: a table for reading (money in cents), or exact csv or json.",
)
@click.option("--at", "at", help=AT_HELP)
@click.option(
    "--timeout",
    type=click.FloatRange(min=0),
    default=DEFAULT_TIMEOUT_SECONDS,
    show_default=True,
    help="Seconds the query may run, its rows printed included, before it is stopped (exit 2); 0 for no limit.",
)
@click.argument("sql")
@handle_errors
def query(config_path: Path | None, output_format: str, at: str | None, timeout: float, sql: str) -> None:
    moment = parse_at(at)
    config = load_config(config_path)

    from pipelines.query import QueryStopped, query_lake, stopped_by_signals

    write = {"table": print_table, "csv": write_csv, "json": write_json}[output_format]
    try:
        with stopped_by_signals(timeout), query_lake(config.lake, sql, moment) as result:
            write(result.columns, result.rows)
    except QueryStopped as stop:
        sys.exit(SIGNALLED + stop.signum)


@click.group(help="Datasets from the warehouse for other tools.")
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
@config_option
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
@handle_errors
def export_focus(config_path: Path | None, period: str, out: Path, export_format: str, source_name: str | None) -> None:
    billing_period = parse_period(period)
    config = load_config(config_path)
    known = [source.name for source in config.billing_sources]
    if source_name is not None and source_name not in known:
        raise UsageProblem(
            f"unknown billing source {source_name!r}; known billing sources (sources[].name): "
            f"{', '.join(known) or 'none'}"
        )

    from pipelines.export import export_focus as write_focus_dataset
    from pipelines.warehouse.connection import connect_read_only

    conn = connect_read_only(config.lake)
    try:
        written = write_focus_dataset(conn, billing_period, out, export_format, source_name)
    finally:
        conn.close()
    for file in written:
        click.echo(f"{file.path}  ({file.source_name}: {file.line_items:,} line items)")


@click.command(help="Post-mortem reports for one run (--run) or all runs (--all) from the warehouse.")
@config_option
@click.option("--run", "run_id", help="Training run id.")
@click.option("--all", "all_runs", is_flag=True, help="Every run.")
@click.option(
    "--out",
    type=click.Path(path_type=Path, file_okay=False),
    help="Output folder (default: reports_dir; required with --at).",
)
@click.option("--at", "at", help=AT_HELP)
@click.option(
    "--png",
    is_flag=True,
    help="Also draw each chart as charts/<chart>.png (2x) and show the PNGs in report.md, for Markdown "
    "viewers without SVG images (slower: rasterizing doubles the drawing).",
)
@handle_errors
def report(
    config_path: Path | None, run_id: str | None, all_runs: bool, out: Path | None, at: str | None, png: bool
) -> None:
    if bool(run_id) == all_runs:
        raise UsageProblem("give exactly one of --run RUN_ID or --all")
    moment = parse_at(at)
    if moment is not None and out is None:
        raise UsageProblem("give --out DIR with --at: the reports of an earlier snapshot would replace today's")

    config = load_config(config_path)

    from pipelines.reports.report_set import code_digest, snapshot_digest, unchanged_report_set
    from pipelines.warehouse.connection import connect_read_only
    from pipelines.warehouse.repair import require_whole

    out_dir, runs = out or config.reports_path, [run_id] if run_id else None
    conn = connect_read_only(config.lake, moment)
    try:
        if at is None:
            require_whole(conn, config.lake)
        # reports already written from the snapshot read: said without importing what draws them
        written = unchanged_report_set(out_dir, snapshot=snapshot_digest(conn, code_digest(png), runs))
        if written is None:
            from pipelines.reports import write_reports

            try:
                written = write_reports(conn, out_dir, runs, png=png)
            except ValueError as error:
                raise UsageProblem(str(error)) from None
    finally:
        conn.close()
    for path in written.paths:
        if str(path).endswith((".html", ".md")):
            click.echo(str(path))
    echo_err(written.rendered_line)


@click.command(help="Convert a warehouse file of an earlier RunLedger into the lake, once (the file is kept).")
@config_option
@handle_errors
def migrate(config_path: Path | None) -> None:
    from pipelines.warehouse.migrate import migrate as migrate_file

    config = load_config(config_path, writer=True)
    lake = config.lake
    result = migrate_file(lake)
    for table, rows in result.rows.items():
        click.echo(f"  {table}: {rows:,} rows")
    click.echo(f"converted {result.source} into {result.lake.describe()} (the file is kept as it was)")
    if result.lake.sqlite_file is not None and result.lake.sqlite_file != lake.sqlite_file:
        click.echo(
            f"now point runledger.yaml at the lake: warehouse: {config.relative(result.lake.sqlite_file.parent)}"
        )
