"""What tells that reports already written are up to date, without drawing anything: the record of
the last report set (`REPORT_SET_FILE`), and the digests it is kept under. Kept apart from the
writer, which imports what renders the reports: `runledger report` of an unchanged set reads only
the lake's catalog and this record."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import duckdb

from pipelines.warehouse.sql import SQL_DIR, read_sql

# The whole set is not even read again when the warehouse content it shows is unchanged: its
# digests and the files written are kept in the output folder. Two digests: of the lake's snapshot
# (a lake that has not changed since, found with one look at its catalog), and of the content the
# reports show (a lake changed elsewhere: reports of the same content are not drawn again).
REPORT_SET_FILE = ".report-set.json"
REPORTS_PACKAGE_DIR = Path(__file__).resolve().parent
# The SQL the reports run besides sql/reports/*.sql: the macros those queries call, the marts'
# statements data.py reads, the warehouse digest and the snapshot read (files of sql/, without `.sql`).
REPORTS_OTHER_SQL = (
    "schema/macros",
    "ops/step_inputs",
    "marts/reconciliation",
    "marts/unattributed_costs",
    "marts/run_cluster_share",
    "ops/report_inputs",
    "marts/recommendations",
    "ops/snapshots",
)


@dataclass(frozen=True)
class RunReportPaths:
    """The files of one run's report.

    Attributes:
        training_run: the run.
        html: `<out_dir>/<run>/report.html`, self-contained.
        markdown: `<out_dir>/<run>/report.md`, referencing its chart images relatively (the
            SVGs, or the PNGs when they were asked for).
        charts: `<out_dir>/<run>/charts/*.svg`, then `charts/*.png` when PNGs were asked for.
    """

    training_run: str
    html: Path
    markdown: Path
    charts: tuple[Path, ...]


@dataclass(frozen=True)
class ReportSet:
    """Every file `write_reports` wrote.

    Attributes:
        runs: the per-run reports, in the order asked for.
        summary_html: `<out_dir>/summary.html`.
        summary_markdown: `<out_dir>/summary.md`.
        summary_charts: `<out_dir>/summary-charts/*.svg` (and `*.png` when asked for): each
            shared cluster's utilization chart.
        rendered: the runs whose report was written this time, in the order asked for; the
            others' reports on disk already showed the same data.
    """

    runs: tuple[RunReportPaths, ...]
    summary_html: Path
    summary_markdown: Path
    rendered: tuple[str, ...] = ()
    summary_charts: tuple[Path, ...] = ()

    @property
    def paths(self) -> tuple[Path, ...]:
        """All written paths: each run's HTML, Markdown and charts, then the summary and its charts."""
        per_run = [path for run in self.runs for path in (run.html, run.markdown, *run.charts)]
        return (*per_run, self.summary_html, self.summary_markdown, *self.summary_charts)

    @property
    def rendered_line(self) -> str:
        """How many run reports were written and how many kept, e.g. `rendered 10 of 200 run
        reports, 190 unchanged`."""
        total, rendered = len(self.runs), len(self.rendered)
        return f"rendered {rendered} of {total} run reports, {total - rendered} unchanged"


def report_set_record(report_set: ReportSet, digest: str, snapshot: str | None) -> dict:
    """What `unchanged_report_set` reads back: the set's files and the digests it was written under."""
    return {
        "digest": digest,
        "snapshot": snapshot,
        "runs": [
            {
                "training_run": run.training_run,
                "html": str(run.html),
                "markdown": str(run.markdown),
                "charts": [str(chart) for chart in run.charts],
            }
            for run in report_set.runs
        ],
        "summary_html": str(report_set.summary_html),
        "summary_markdown": str(report_set.summary_markdown),
        "summary_charts": [str(chart) for chart in report_set.summary_charts],
    }


def unchanged_report_set(out_dir: Path, **digest: str | None) -> ReportSet | None:
    """The report set written last time, if it was written under the same digest (`digest=`: of
    the warehouse content, code and runs; `snapshot=`: `snapshot_digest`) and all its files are
    still there."""
    ((kind, value),) = digest.items()
    record_path = out_dir / REPORT_SET_FILE
    if value is None or not record_path.is_file():
        return None
    record = json.loads(record_path.read_text())
    if record.get(kind) != value:
        return None
    report_set = ReportSet(
        runs=tuple(
            RunReportPaths(
                training_run=run["training_run"],
                html=Path(run["html"]),
                markdown=Path(run["markdown"]),
                charts=tuple(Path(chart) for chart in run["charts"]),
            )
            for run in record["runs"]
        ),
        summary_html=Path(record["summary_html"]),
        summary_markdown=Path(record["summary_markdown"]),
        summary_charts=tuple(Path(chart) for chart in record.get("summary_charts", ())),
    )
    if not all(path.is_file() for path in report_set.paths):
        return None
    return report_set


def report_code_files() -> list[Path]:
    """Every file the reports' text depends on: this package's modules, every `sql/reports/` file
    and the other SQL files the reports run (REPORTS_OTHER_SQL)."""
    return [
        *sorted(REPORTS_PACKAGE_DIR.glob("*.py")),
        *sorted(SQL_DIR.glob("reports/*.sql")),
        *(SQL_DIR / f"{path}.sql" for path in REPORTS_OTHER_SQL),
    ]


def code_digest(png: bool) -> str:
    """Digest of the report code, the SQL it runs and the chart formats asked for: a changed
    template, chart or report query rewrites every report, and so does asking for PNGs or no
    longer asking for them."""
    digest = hashlib.sha256(f"png={png}|".encode())
    for path in report_code_files():
        digest.update(path.read_bytes())
    return digest.hexdigest()


def snapshot_digest(conn: duckdb.DuckDBPyConnection, code: str, runs: Sequence[str] | None) -> str | None:
    """The digest of the lake's snapshot the connection reads (its id and time: a lake created
    again has other times), the report code (`code_digest`) and the runs asked for; None off a
    lake (an in-memory DuckDB), which has no snapshots.

    Equal digests: the lake has not changed since, so neither has anything the reports show.
    """
    ((kind,),) = conn.execute(read_sql("ops/snapshots", "catalog_type")).fetchall()
    if kind != "ducklake":
        return None
    ((snapshot, moment),) = conn.execute(read_sql("ops/snapshots", "current")).fetchall()
    asked = None if runs is None else list(runs)
    return hashlib.sha256(f"{code}|{snapshot}|{moment.isoformat()}|{asked!r}".encode()).hexdigest()
