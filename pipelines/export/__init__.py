"""Datasets written from the warehouse for other tools: `runledger export focus` (`focus.py`)."""

from pipelines.export.focus import EXPORT_FORMATS, ExportedFile, NothingToExport, export_focus, focus_columns

__all__ = ["EXPORT_FORMATS", "ExportedFile", "NothingToExport", "export_focus", "focus_columns"]
