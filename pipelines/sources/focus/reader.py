"""Any FOCUS export in a local file or folder."""

from __future__ import annotations

import hashlib
from datetime import date, datetime
from pathlib import Path

import polars as pl

from connectors.local.files import list_export_files
from connectors.local.settings import FOCUS_SUFFIXES
from pipelines.sources import focus_files
from pipelines.sources.base import FileExportReader, PeriodBatch, reading_files
from pipelines.sources.focus.settings import FocusSource
from pipelines.sources.kind import ReaderPlace
from pipelines.sources.mappings import MappingRule


class FocusFilesReader(FileExportReader):
    """FOCUS files (CSV or Parquet) holding any billing periods."""

    source_format = "focus"

    def _periods(self) -> pl.LazyFrame:
        return focus_files.scan_periods(self.files)

    def billing_periods(self) -> list[date]:
        """The periods the files hold rows of; a BillingPeriodStart that is not a timestamp (its row
        belongs to no period) is refused, naming it."""
        periods = super().billing_periods()
        try:
            unparsed = self._periods().select(pl.col("unparsed").drop_nulls().first()).collect().item()
        except pl.exceptions.PolarsError as error:
            raise self._unreadable(error) from None
        if unparsed is not None:
            raise focus_files.unparsed_timestamp_error(
                unparsed["file"], unparsed["_row"], "BillingPeriodStart", unparsed["value"]
            )
        return periods

    def _delivered_columns(self) -> list[str]:
        return focus_files.delivered_columns(self.files)

    def delivery_marks(self) -> dict[date, str]:
        """FOCUS files carry no delivery time: any change to a file (name, size, modification
        time) marks every period the files hold as delivered again."""
        fingerprint = hashlib.sha256(
            "\n".join(f"{f}|{f.stat().st_size}|{f.stat().st_mtime_ns}" for f in self.files).encode()
        ).hexdigest()[:16]
        return dict.fromkeys(self.billing_periods(), fingerprint)

    def batch(self, billing_period: date, rules: list[MappingRule], ingested_at: datetime) -> PeriodBatch:
        """The period's rows of every file, the files typed into Parquet copies first."""
        typed: list[Path] = []
        with reading_files(f"cannot read FOCUS files {', '.join(map(str, self.files))}", typed):
            for number, file in enumerate(self.files):
                typed.append(self._typed_file(billing_period, number))
                focus_files.write_typed(file, typed[-1])
            mapped, rows, billed = focus_files.read_delivery(
                typed,
                [str(file) for file in self.files],
                source_name=self.name,
                source_format=self.source_format,
                billing_period=billing_period,
                select_period=True,
                category_rules=rules,
                ingested_at=ingested_at,
            )
        return self._batch(billing_period, mapped, rows, billed, tuple(typed))


def open_reader(source: FocusSource, place: ReaderPlace) -> FocusFilesReader:
    """The reader of a `focus` source: its file, or the FOCUS files of its folder."""
    return FocusFilesReader(
        source.name, list_export_files(place.resolve(source.path), FOCUS_SUFFIXES), place.staging_dir
    )
