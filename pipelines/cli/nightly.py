"""`runledger demo`, `runledger run` and `runledger repair`: the nightly job, then its summary."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING

import click

from pipelines.cli.common import config_option, echo_err, handle_errors, load_config, parse_period, require_partitions
from pipelines.cli.output import TerminalProgress, print_table, printable

if TYPE_CHECKING:
    import duckdb


def _run_nightly(
    config_path: Path | None, periods: Sequence[date] = (), full_refresh: bool = False, take_over_lake: bool = False
) -> list[str]:
    """The nightly job with its stage lines on stderr (control characters of run ids or tags
    escaped), under a progress bar when stderr is a terminal; the reports written."""
    from pipelines.nightly import run_nightly

    options = {"full_refresh": full_refresh, "take_over_lake": take_over_lake}
    if not sys.stderr.isatty():
        return run_nightly(config_path, periods, echo=lambda line: echo_err(printable(line)), **options).reports
    bar = TerminalProgress()
    try:
        return run_nightly(
            config_path, periods, echo=lambda line: bar.echo(printable(line)), progress=bar.update, **options
        ).reports
    finally:
        bar.close()


def _print_summary(config_path: Path | None, reports: list[str]) -> None:
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
        clusters = conn.execute(read_sql("marts/cluster_utilization", "overview"))
        cluster_columns = [d[0] for d in clusters.description]
        cluster_rows = clusters.fetchall()
    finally:
        conn.close()
    click.echo("")
    print_table(columns, rows)
    click.echo("")
    if alert_rows:
        click.echo("budget alerts (first day the cumulative effective spend reached the threshold):")
        print_table(alert_columns, alert_rows)
    else:
        click.echo("budget alerts: no run reached its warning or over threshold")
    click.echo("")
    if waste_rows:
        click.echo("waste (an analysis of the attributed spend above; it does not change it):")
        print_table(waste_columns, waste_rows)
    else:
        click.echo("waste: none found (see docs/semantics.md, Waste, for what each kind needs)")
    if whys:
        click.echo("")
        click.echo("why (each run's variance and its three largest causes):")
        for training_run, why in whys:
            click.echo(printable(f"{training_run}: {why}"))
    if cluster_rows:
        click.echo("")
        click.echo("shared clusters (each node's bill split by the GPU-seconds its jobs held; idle: held by none):")
        print_table(cluster_columns, cluster_rows)
    if provisional_rows:
        click.echo("")
        click.echo("provisional spend (estimated from run events since the newest billed hour, not billed yet):")
        print_table(provisional_columns, provisional_rows)
    click.echo("")
    click.echo(f"warehouse: {config.lake.describe()}")
    summary = [p for p in reports if p.endswith("summary.html")]
    html = [p for p in reports if p.endswith("report.html")]
    click.echo(printable(f"reports:   {summary[0] if summary else config.reports_path}"))
    for path in html:
        click.echo(printable(f"           {path}"))


def _why_paragraphs(conn: duckdb.DuckDBPyConnection, training_runs: list[str]) -> list[tuple[str, str]]:
    """Each budgeted run's "why" paragraph, as its report opens with it, in the order given."""
    from pipelines.reports.data import known_runs, load_overviews
    from pipelines.reports.run_causes import why_paragraph

    known = set(known_runs(conn))
    overviews = load_overviews(conn, [training_run for training_run in training_runs if training_run in known])
    return [(training_run, why) for training_run, overview in overviews.items() if (why := why_paragraph(overview))]


@click.command(help="Write the demo exports and config into DIR (default: .), run the nightly job, report.")
@click.option(
    "--dir",
    "target",
    type=click.Path(path_type=Path, file_okay=False),
    default=Path("."),
    show_default=True,
    help="Folder to write the demo into.",
)
@handle_errors
def demo(target: Path) -> None:
    from pipelines.demo import write_demo

    config_path = write_demo(target)
    click.echo(f"demo data and config written: {config_path}")
    _print_summary(config_path, _run_nightly(config_path))


@click.command(help="The nightly job: ingest, normalize, attribute, budget variance, reports.")
@config_option
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
@click.option(
    "--take-over-lake",
    is_flag=True,
    help="This configuration replaces the one that owns the lake (a moved project); see docs/operations.md.",
)
@handle_errors
def run(config_path: Path | None, periods: tuple[str, ...], full_refresh: bool, take_over_lake: bool) -> None:
    billing_periods = [parse_period(p) for p in periods]
    load_config(config_path, writer=True)  # a bad configuration said before Dagster is loaded
    require_partitions(periods, billing_periods)
    reports = _run_nightly(config_path, billing_periods, full_refresh, take_over_lake)
    _print_summary(config_path, reports)


@click.command(
    help="Repair a lake whose data files were lost or damaged by hand: rebuild what the nightly job computes, "
    "reload lost line items from the exports, keep the alert ledger, loads and tag snapshots."
)
@config_option
@handle_errors
def repair(config_path: Path | None) -> None:
    from pipelines.warehouse.connection import connect, require_readable
    from pipelines.warehouse.locks import writer_lock
    from pipelines.warehouse.repair import repair_lake

    config = load_config(config_path)
    require_readable(config.lake)
    with writer_lock(config.lake):
        conn = connect(config.lake)
        try:
            done = repair_lake(conn, config.lake)
        finally:
            conn.close()
    if not done.damaged:
        click.echo("every data file of the lake is as its catalog recorded it: nothing to repair")
        return
    for file in done.damaged:
        click.echo(f"damaged: {file.describe()}")
    reload = ", ".join(f"{source} {period:%Y-%m}" for source, period in done.reload)
    click.echo(
        f"recreated {', '.join(done.rebuilt)}; "
        + (f"reloading {reload} from the exports, " if reload else "")
        + "rebuilding what the nightly job computes"
    )
    reports = _run_nightly(config_path, done.periods, full_refresh=bool(done.reload))
    _print_summary(config_path, reports)
    click.echo("repaired: every data file of the lake is whole again")
