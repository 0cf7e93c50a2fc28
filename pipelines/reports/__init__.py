"""Post-mortem cost reports per training run and a summary of all runs, from the warehouse.

`write_reports(conn, out_dir, runs)` writes, per run, a self-contained HTML report (inline CSS and
SVG charts), its Markdown twin showing the same charts as SVG files (PNG files on demand), and a summary
of every run. The writer is imported when first named: `pipelines.reports.report_set`, which tells
an unchanged set, loads without what renders the reports.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pipelines.reports.writer import ReportSet, RunReportPaths, write_reports

__all__ = ["ReportSet", "RunReportPaths", "write_reports"]


def __getattr__(name: str) -> object:
    if name in __all__:
        from pipelines.reports import writer

        return getattr(writer, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
