"""`manual_costs`: costs no cloud bills (labour, data labelling, tooling, ...), CSV or YAML files.

settings.py (`ManualCostsSource`), reader.py, cost_files.py (the files read and checked line by
line, written as FOCUS rows that `pipelines/sources/focus_mapping.sql` maps like a FOCUS file's).
"""

from pipelines.sources.drift import ColumnDrift, compare_columns
from pipelines.sources.kind import SourceKind
from pipelines.sources.manual_costs import cost_files
from pipelines.sources.manual_costs.reader import open_reader
from pipelines.sources.manual_costs.settings import ManualCostsSource


def column_drift(source_format: str, columns: list[str]) -> ColumnDrift:
    """The required columns the files lack; no column is new (the reader refuses a column that is
    neither a manual cost column nor a dimension)."""
    return compare_columns(cost_files.REQUIRED_COLUMNS, columns, lambda _: True)


KIND = SourceKind(
    name="manual_costs",
    settings=ManualCostsSource,
    billing=True,
    dagster_kinds=frozenset({"pyarrow", "duckdb"}),
    description="the manual cost files (CSV or YAML) are checked line by line and written as FOCUS rows, which "
    "DuckDB maps like a FOCUS file's",
    reader=open_reader,
    source_formats=("manual_costs",),
    drift=column_drift,
)
