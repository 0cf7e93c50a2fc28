"""The schema drift of manual cost files."""

from pipelines.sources.drift import ColumnDrift, compare_columns
from pipelines.sources.manual_costs.cost_files import REQUIRED_COLUMNS


def column_drift(_source_format: str, columns: list[str]) -> ColumnDrift:
    """The required columns the files lack; no column is new (the reader refuses a column that is
    neither a manual cost column nor a dimension)."""
    return compare_columns(REQUIRED_COLUMNS, columns, lambda _: True)
