"""`focus`: any FOCUS 1.0-1.2 export, CSV or Parquet, a file or a folder.

settings.py (`FocusSource`), reader.py. The FOCUS files' reading, mapping and drift are shared
with the AWS FOCUS export and manual costs: `pipelines/sources/focus_files.py`,
`focus_mapping.sql`, `focus_totals.sql`, `drift.focus_drift`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pipelines.sources.focus.settings import FocusSource
from pipelines.sources.kind import ReaderPlace, SourceKind

if TYPE_CHECKING:
    from pipelines.sources.drift import ColumnDrift
    from pipelines.sources.focus.reader import FocusFilesReader


def open_reader(source: FocusSource, place: ReaderPlace) -> FocusFilesReader:
    from pipelines.sources.focus import reader

    return reader.open_reader(source, place)


def column_drift(source_format: str, columns: list[str]) -> ColumnDrift:
    from pipelines.sources.drift import focus_drift

    return focus_drift(source_format, columns)


KIND = SourceKind(
    name="focus",
    settings=FocusSource,
    billing=True,
    dagster_kinds=frozenset({"polars", "duckdb"}),
    description="polars reads and types the FOCUS files, DuckDB maps them onto FOCUS 1.2",
    reader=open_reader,
    source_formats=("focus",),
    drift=column_drift,
)
