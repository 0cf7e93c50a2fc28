"""`focus`: any FOCUS 1.0-1.2 export, CSV or Parquet, a file or a folder.

settings.py (`FocusSource`), reader.py. The FOCUS files' reading, mapping and drift are shared
with the AWS FOCUS export and manual costs: `pipelines/sources/focus_files.py`,
`focus_mapping.sql`, `focus_totals.sql`, `drift.focus_drift`.
"""

from pipelines.sources.focus.settings import FocusSource
from pipelines.sources.kind import SourceKind, deferred

KIND = SourceKind(
    name="focus",
    settings=FocusSource,
    billing=True,
    dagster_kinds=frozenset({"polars", "duckdb"}),
    description="polars reads and types the FOCUS files, DuckDB maps them onto FOCUS 1.2",
    reader=deferred("pipelines.sources.focus.reader", "open_reader"),
    source_formats=("focus",),
    drift=deferred("pipelines.sources.drift", "focus_drift"),
)
