"""`manual_costs`: costs no cloud bills (labour, data labelling, tooling, ...), CSV or YAML files.

settings.py (`ManualCostsSource`), reader.py, cost_files.py (the files read and checked line by
line, written as FOCUS rows that `pipelines/sources/focus_mapping.sql` maps like a FOCUS file's).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pipelines.sources.kind import ReaderPlace, SourceKind
from pipelines.sources.manual_costs.settings import ManualCostsSource

if TYPE_CHECKING:
    from pipelines.sources.drift import ColumnDrift
    from pipelines.sources.manual_costs.reader import ManualCostsReader


def open_reader(source: ManualCostsSource, place: ReaderPlace) -> ManualCostsReader:
    from pipelines.sources.manual_costs import reader

    return reader.open_reader(source, place)


def column_drift(source_format: str, columns: list[str]) -> ColumnDrift:
    """The required columns the files lack; no column is new (the reader refuses a column that is
    neither a manual cost column nor a dimension)."""
    from pipelines.sources.drift import compare_columns
    from pipelines.sources.manual_costs.cost_files import REQUIRED_COLUMNS

    return compare_columns(REQUIRED_COLUMNS, columns, lambda _: True)


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
