"""Post-mortem cost reports per training run and a summary of all runs, from the warehouse.

`write_reports(conn, out_dir, runs)` writes, per run, a self-contained HTML report (inline CSS and
SVG charts), its Markdown twin showing the same charts as SVG files (PNG files on demand), and a summary
of every run.
"""

from pipelines.reports.writer import ReportSet, RunReportPaths, write_reports

__all__ = ["ReportSet", "RunReportPaths", "write_reports"]
