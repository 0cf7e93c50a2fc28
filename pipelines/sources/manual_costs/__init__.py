"""`manual_costs`: costs no cloud bills (labour, data labelling, tooling, ...), CSV or YAML files.

settings.py (`ManualCostsSource`), reader.py, cost_files.py (the files read and checked line by
line, written as FOCUS rows that `pipelines/sources/focus_mapping.sql` maps like a FOCUS file's).
"""

from pipelines.sources.kind import SourceKind, deferred
from pipelines.sources.manual_costs.settings import ManualCostsSource

KIND = SourceKind(
    name="manual_costs",
    settings=ManualCostsSource,
    billing=True,
    dagster_kinds=frozenset({"pyarrow", "duckdb"}),
    description="the manual cost files (CSV or YAML) are checked line by line and written as FOCUS rows, which "
    "DuckDB maps like a FOCUS file's",
    reader=deferred("pipelines.sources.manual_costs.reader", "open_reader"),
    source_formats=("manual_costs",),
    drift=deferred("pipelines.sources.manual_costs.drift", "column_drift"),
)
