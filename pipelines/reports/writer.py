"""Writes the post-mortem report of each run and the summary of all runs."""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
from collections import deque
from collections.abc import Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path

import duckdb

from pipelines.reports.chart_rendering import chart_renderer, render_chart
from pipelines.reports.charts import (
    ChartSpec,
    cumulative_spend_chart,
    daily_spend_chart,
    estimate_vs_actual_chart,
    top_resources_chart,
    variance_waterfall_chart,
    waste_by_kind_chart,
)
from pipelines.reports.cluster_chart import utilization_chart
from pipelines.reports.clusters import load_clusters
from pipelines.reports.data import (
    RunDetails,
    RunOverview,
    known_runs,
    load_alerts,
    load_details,
    load_group_budgets,
    load_overviews,
    load_period_shares,
    load_reconciliation,
    load_waste_ranking,
)
from pipelines.reports.document import Chart
from pipelines.reports.recommendations import load_top_recommendations
from pipelines.reports.render import to_html, to_markdown
from pipelines.reports.report_set import (
    REPORT_SET_FILE,
    ReportSet,
    RunReportPaths,
    code_digest,
    report_set_record,
    snapshot_digest,
    unchanged_report_set,
)
from pipelines.reports.run_causes import variance_steps
from pipelines.reports.run_facts import currency_of
from pipelines.reports.run_report import SUMMARY_STEM, run_document
from pipelines.reports.summary_report import SummaryRun, summary_document
from pipelines.reports.utilization_chart import run_utilization_chart
from pipelines.warehouse.catalog import warehouse_catalog
from pipelines.warehouse.connection import on_a_lake
from pipelines.warehouse.sql import read_sql
from pipelines.warehouse.step_inputs import tables_inputs

CHARTS_DIR = "charts"
# Unlike the digests of the warehouse steps (pipelines/warehouse/step_inputs.py), the reports'
# are files in the output folder: they vouch for the files beside them (in whichever folder a
# report was written to, and gone with it), and reports are written from read-only connections,
# which cannot record anything in the warehouse.
# A run's report is rewritten only when what it shows changed: the digest of its data and of
# the code that draws it (this package's modules and the SQL they run) is kept beside it.
INPUTS_DIGEST_FILE = ".inputs-sha256"
# The lake's tables no report reads (bookkeeping); of `loads`, the reports read its good loads only,
# and a night whose deliveries were all loaded before appends rows to it.
NOT_REPORTED = frozenset({"loads", "step_inputs", "alert_deliveries", "lake_owners", "schema_version"})
MAX_RUN_DIRECTORY = 120  # characters; file systems refuse names over 255 bytes
REPORT_STEM = "report"
SVG_SUFFIX = ".svg"
PNG_SUFFIX = ".png"
SUMMARY_HTML = f"{SUMMARY_STEM}.html"
SUMMARY_MARKDOWN = f"{SUMMARY_STEM}.md"
SUMMARY_CHARTS_DIR = "summary-charts"
# The files the output folder holds beside the run folders (its other files start with a dot, as
# no run folder does): a run id spelled like one, in any case (file systems that ignore case), is
# not its folder's name.
OWN_FILE_NAMES = frozenset({SUMMARY_HTML, SUMMARY_MARKDOWN, SUMMARY_CHARTS_DIR})
REPORT_FILE_MODE = 0o644
UNSAFE_PATH_CHARACTERS = re.compile(r"[^A-Za-z0-9._-]+")
SVG_ID = re.compile(r'\bid="([^"]+)"')
SVG_ID_REFERENCE = re.compile(r'(\bid="|url\(#|href="#)([^")]+)')
# Runs whose charts may be rendering at once: enough to keep every worker busy while the parent
# prepares the next runs' charts and writes finished reports, few enough that rendered charts do
# not pile up in memory.
RUNS_IN_PROGRESS = 8


def write_reports(
    conn: duckdb.DuckDBPyConnection, out_dir: Path, runs: Sequence[str] | None = None, *, png: bool = False
) -> ReportSet:
    """Writes post-mortem reports for runs, and the summary of every run, from the warehouse.

    Per run: `<out_dir>/<run>/report.html` (charts inline), `report.md` and `charts/*.svg` (with
    `png`, also `charts/*.png`, which the Markdown then shows instead). Always:
    `<out_dir>/summary.html` and `summary.md`, covering every known run and linking to each
    run report present in `out_dir`, with each shared cluster's utilization chart in
    `summary-charts/`. Only reads the warehouse: a read-only connection works.

    Args:
        conn: warehouse connection.
        out_dir: folder for the reports, created when missing.
        runs: training runs to report; None means every run with a budget or attributed cost.
        png: also rasterize every chart as a PNG (twice the nominal size) for Markdown viewers
            that do not show SVG images.

    Returns:
        The paths written.

    Raises:
        ValueError: a requested run has neither a budget nor attributed cost; the message
            names it and lists the known runs.
    """
    code = code_digest(png)
    snapshot = snapshot_digest(conn, code, runs)
    unchanged = unchanged_report_set(out_dir, snapshot=snapshot)
    if unchanged is not None:
        return unchanged
    known = known_runs(conn)
    selected = _select_runs(known, runs)
    set_digest = hashlib.sha256(f"{code}|{_warehouse_digest(conn)}|{selected!r}".encode()).hexdigest()
    unchanged = unchanged_report_set(out_dir, digest=set_digest)
    if unchanged is not None:
        _write_atomically(
            out_dir / REPORT_SET_FILE, json.dumps(report_set_record(unchanged, set_digest, snapshot)).encode()
        )
        return unchanged
    (out_dir / REPORT_SET_FILE).unlink(missing_ok=True)
    overviews = load_overviews(conn, known)
    details = load_details(conn, [overviews[training_run] for training_run in selected], load_reconciliation(conn))
    planned = [
        _plan_run_report(overviews[training_run], details[training_run], out_dir, code, png=png)
        for training_run in selected
    ]
    stale = [report for report in planned if report.digest is not None]
    renderer = chart_renderer(len(stale), png=png)
    try:
        in_progress: deque[_RunReport] = deque()
        for report in stale:
            report.renders = [renderer.submit(spec.vega_lite) for spec in report.specs]
            in_progress.append(report)
            if len(in_progress) > RUNS_IN_PROGRESS:
                in_progress.popleft().finish()
        for report in in_progress:
            report.finish()
    finally:
        renderer.close()
    summary_html, summary_markdown, summary_charts = _write_summary(conn, overviews, out_dir, png=png)
    report_set = ReportSet(
        runs=tuple(report.paths for report in planned),
        summary_html=summary_html,
        summary_markdown=summary_markdown,
        rendered=tuple(report.paths.training_run for report in stale),
        summary_charts=summary_charts,
    )
    _write_atomically(
        out_dir / REPORT_SET_FILE, json.dumps(report_set_record(report_set, set_digest, snapshot)).encode()
    )
    return report_set


def _warehouse_digest(conn: duckdb.DuckDBPyConnection) -> str:
    """The digest of everything the reports read. On a lake: the files of its tables
    (`tables_inputs`: the same files hold the same rows, and no row is read, so it costs the same
    at any size) and its good loads. Off a lake (a warehouse file): a checksum of the rows
    (`ops/report_inputs`)."""
    if not on_a_lake(conn):
        (digest,) = conn.execute(read_sql("ops/report_inputs", "digest")).fetchone()
        return digest
    tables = [name for name, relation in warehouse_catalog().items() if relation.kind == "table"]
    (good_loads,) = conn.execute(read_sql("ops/step_inputs", "good_loads")).fetchone()
    reported = [table for table in tables if table not in NOT_REPORTED]
    return tables_inputs(conn, "post_mortem_reports", reported, (), {"good_loads": good_loads}).inputs_digest


def _select_runs(known: Sequence[str], runs: Sequence[str] | None) -> list[str]:
    if runs is None:
        return list(known)
    if isinstance(runs, str):
        raise TypeError("runs must be a sequence of run ids, not a single string")
    known_set = set(known)
    unknown = [training_run for training_run in runs if training_run not in known_set]
    if unknown:
        raise ValueError(
            f"unknown training run {', '.join(map(repr, unknown))}: no budget and no attributed cost "
            f"in the warehouse; known runs: {', '.join(known) or 'none'}"
        )
    return list(dict.fromkeys(runs))


def run_directory_name(training_run: str) -> str:
    """The run's folder name under the output folder: the run id when it is a safe file name that
    is not one of the folder's own files.

    Other ids (with `/`, spaces, leading dots..., empty or longer than MAX_RUN_DIRECTORY characters,
    or spelled like `summary.html` or `summary.md` in any case: a tag value can be any text) get
    unsafe characters replaced, are cut short, and get a short hash of the id appended, so that
    distinct runs never share a folder and no run folder is one of the output folder's files.
    """
    safe = UNSAFE_PATH_CHARACTERS.sub("_", training_run).strip(".")
    if safe == training_run and 0 < len(safe) <= MAX_RUN_DIRECTORY and safe.casefold() not in OWN_FILE_NAMES:
        return safe
    digest = hashlib.sha256(training_run.encode()).hexdigest()[:8]
    return f"{safe[: MAX_RUN_DIRECTORY - 9] or 'run'}-{digest}"


def run_charts(overview: RunOverview, details: RunDetails) -> list[ChartSpec]:
    """The charts of a run's report; variance charts only when it has a budget."""
    currency = currency_of(overview)
    has_budget = overview.header.has_budget and overview.total.estimated_cost is not None
    charts = [cumulative_spend_chart(overview.header, overview.total, details.daily_spend, currency)]
    if overview.categories:
        charts.append(estimate_vs_actual_chart(overview.categories, currency, has_budget=has_budget))
    if details.daily_spend:
        charts.append(daily_spend_chart(details.daily_spend, currency))
    if has_budget:
        charts.append(variance_waterfall_chart(overview.total, overview.categories, currency, variance_steps(overview)))
    if details.top_resources.top:
        charts.append(top_resources_chart(details.top_resources.top, currency))
    if details.waste.effective_cost > 0:
        charts.append(waste_by_kind_chart(details.waste.kinds, currency))
    if details.utilization:
        charts.append(run_utilization_chart(overview.header.training_run, details.utilization))
    return charts


def _inputs_digest(overview: RunOverview, details: RunDetails, code_digest: str) -> str:
    return hashlib.sha256(f"{code_digest}|{overview!r}|{details!r}".encode()).hexdigest()


@dataclass
class _RunReport:
    """A run's report: kept when the one on disk shows the same data, else its charts are handed
    to the renderer and `finish` writes its files."""

    paths: RunReportPaths
    overview: RunOverview
    details: RunDetails
    specs: list[ChartSpec]
    digest: str | None  # None: the report on disk is current and is kept
    renders: list[Future] = field(default_factory=list)

    def finish(self) -> None:
        """Waits for the charts and writes the chart files, the HTML, the Markdown and the digest."""
        run_dir = self.paths.html.parent
        charts_dir = run_dir / CHARTS_DIR
        charts_dir.mkdir(parents=True, exist_ok=True)
        digest_path = run_dir / INPUTS_DIGEST_FILE
        digest_path.unlink(missing_ok=True)
        rendered: dict[str, Chart] = {}
        for spec, render in zip(self.specs, self.renders, strict=True):
            svg, png = render.result()
            svg = scope_svg_ids(svg, spec.name)
            _write_atomically(charts_dir / f"{spec.name}{SVG_SUFFIX}", svg.encode())
            image = f"{spec.name}{SVG_SUFFIX}"
            if png is not None:
                image = f"{spec.name}{PNG_SUFFIX}"
                _write_atomically(charts_dir / image, png)
            rendered[spec.name] = Chart(title=spec.title, svg=svg, image_path=f"{CHARTS_DIR}/{image}")
        _remove_stale_charts(charts_dir, keep=self.paths.charts)
        document = run_document(self.overview, self.details, rendered)
        _write_atomically(self.paths.html, to_html(document).encode())
        _write_atomically(self.paths.markdown, to_markdown(document).encode())
        _write_atomically(digest_path, self.digest.encode())


def _plan_run_report(
    overview: RunOverview, details: RunDetails, out_dir: Path, code_digest: str, *, png: bool
) -> _RunReport:
    """The run's report, with a digest unless the report on disk shows the same data."""
    run_dir = out_dir / run_directory_name(overview.header.training_run)
    specs = run_charts(overview, details)
    suffixes = (SVG_SUFFIX, PNG_SUFFIX) if png else (SVG_SUFFIX,)
    paths = RunReportPaths(
        training_run=overview.header.training_run,
        html=run_dir / f"{REPORT_STEM}.html",
        markdown=run_dir / f"{REPORT_STEM}.md",
        charts=tuple(run_dir / CHARTS_DIR / f"{spec.name}{suffix}" for suffix in suffixes for spec in specs),
    )
    digest_path = run_dir / INPUTS_DIGEST_FILE
    digest = _inputs_digest(overview, details, code_digest)
    unchanged = (
        digest_path.is_file()
        and digest_path.read_text() == digest
        and all(path.is_file() for path in (paths.html, paths.markdown, *paths.charts))
    )
    return _RunReport(paths, overview, details, specs, digest=None if unchanged else digest)


def scope_svg_ids(svg: str, chart_name: str) -> str:
    """Renames the ids of a chart's SVG (Vega's `clip1`, `clip2` …) to `<chart_name>-1`,
    `<chart_name>-2` … in order of appearance.

    The charts of one HTML page share one id namespace, and Vega numbers ids per process: two
    charts rendered by different workers would both define `clip1`, and one would be clipped by
    the other's rectangle. Numbering in order also makes the page's bytes independent of which
    worker drew which chart.
    """
    renamed: dict[str, str] = {}
    for match in SVG_ID.finditer(svg):
        renamed.setdefault(match.group(1), f"{chart_name}-{len(renamed) + 1}")
    if not renamed:
        return svg
    return SVG_ID_REFERENCE.sub(
        lambda match: match.group(0).replace(match.group(2), renamed.get(match.group(2), match.group(2))), svg
    )


def _remove_stale_charts(charts_dir: Path, keep: Sequence[Path]) -> None:
    """Deletes chart files an earlier report wrote that this one no longer has (e.g. a budget
    removed, or the PNGs of an earlier report asked for with them)."""
    for path in charts_dir.glob("*"):
        if path.suffix in (SVG_SUFFIX, PNG_SUFFIX) and path not in keep:
            path.unlink()


def _write_summary(
    conn: duckdb.DuckDBPyConnection, overviews: Mapping[str, RunOverview], out_dir: Path, *, png: bool
) -> tuple[Path, Path, tuple[Path, ...]]:
    """Writes the summary and its clusters' charts; returns the summary's HTML, Markdown and chart files."""
    out_dir.mkdir(parents=True, exist_ok=True)
    runs = []
    for training_run, overview in overviews.items():
        link = f"{run_directory_name(training_run)}/{REPORT_STEM}"
        has_report = (out_dir / f"{link}.html").exists()
        runs.append(SummaryRun(overview=overview, report_link=link if has_report else None))
    clusters = load_clusters(conn)
    charts_dir = out_dir / SUMMARY_CHARTS_DIR
    charts: dict[str, Chart] = {}
    chart_files: list[Path] = []
    for spec in (utilization_chart(cluster) for cluster in clusters):
        charts_dir.mkdir(exist_ok=True)
        svg, png_bytes = render_chart(spec.vega_lite, png=png)
        svg = scope_svg_ids(svg, spec.name)
        chart_files.append(charts_dir / f"{spec.name}{SVG_SUFFIX}")
        _write_atomically(chart_files[-1], svg.encode())
        if png_bytes is not None:
            chart_files.append(charts_dir / f"{spec.name}{PNG_SUFFIX}")
            _write_atomically(chart_files[-1], png_bytes)
        image = f"{SUMMARY_CHARTS_DIR}/{chart_files[-1].name}"
        charts[spec.name] = Chart(title=spec.title, svg=svg, image_path=image)
    if charts_dir.is_dir():
        _remove_stale_charts(charts_dir, keep=chart_files)
    document = summary_document(
        runs,
        load_period_shares(conn),
        load_alerts(conn),
        load_waste_ranking(conn),
        clusters,
        charts,
        recommendations=load_top_recommendations(conn),
        group_budgets=load_group_budgets(conn),
    )
    html_path = out_dir / SUMMARY_HTML
    markdown_path = out_dir / SUMMARY_MARKDOWN
    _write_atomically(html_path, to_html(document).encode())
    _write_atomically(markdown_path, to_markdown(document).encode())
    return html_path, markdown_path, tuple(chart_files)


def _write_atomically(path: Path, content: bytes) -> None:
    """Writes the file whole or not at all: a reader never sees half a report."""
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(content)
        os.chmod(temporary, REPORT_FILE_MODE)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
