"""A `manual_costs` source: CSV or YAML files of costs no cloud bills, in a file or a folder."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import date, datetime
from decimal import Decimal
from functools import cached_property
from pathlib import Path

from connectors.errors import SourceError
from connectors.local.files import list_export_files
from pipelines.sources import focus_files
from pipelines.sources.base import FileExportReader, PeriodBatch, reading_files, refuse_unusable_files
from pipelines.sources.kind import ReaderPlace
from pipelines.sources.manual_costs import cost_files
from pipelines.sources.manual_costs.settings import ManualCostsSource
from pipelines.sources.mappings import CategoryRule


class ManualCostsReader(FileExportReader):
    """Manual cost files holding any billing periods (a line's month is its period), read and
    validated whole before any period is loaded, so a bad line stops every period of the source."""

    source_format = "manual_costs"

    def __init__(self, name: str, files: Sequence[Path], staging_dir: Path, dimension_tags: Mapping[str, str]) -> None:
        """
        Args:
            name: the source's name.
            files: its files.
            staging_dir: where the typed copies are written.
            dimension_tags: each attribution dimension a column may fill, with the tag key its
                values are tagged with (the dimension's first configured key).
        """
        super().__init__(name, files, staging_dir)
        self.dimension_tags = dict(dimension_tags)

    @cached_property
    def _manual_files(self) -> list[cost_files.ManualFile]:
        refuse_unusable_files(self.files, [str(file) for file in self.files])
        return [cost_files.read_manual_file(file, list(self.dimension_tags)) for file in self.files]

    @property
    def line_count(self) -> int:
        """The files' cost lines, once every file is read and checked."""
        return sum(len(manual.lines) for manual in self._manual_files)

    def billing_periods(self) -> list[date]:
        """The months the files' lines fall in, oldest first."""
        periods = {line.day.replace(day=1) for manual in self._manual_files for line in manual.lines}
        if not periods:
            raise SourceError(f"no cost lines in {', '.join(map(str, self.files))}; the rows loaded before are kept")
        return sorted(periods)

    def first_row_of(self, billing_period: date) -> str:
        return next(
            self._place(str(manual.path), line.row - 1)
            for manual in self._manual_files
            for line in manual.lines
            if line.day.replace(day=1) == billing_period
        )

    def _delivered_columns(self) -> list[str]:
        return list(dict.fromkeys(column for manual in self._manual_files for column in manual.columns))

    def delivery_marks(self) -> dict[date, str]:
        """Any change to a file (name, size, modification time) marks every period as delivered again."""
        fingerprint = hashlib.sha256(
            "\n".join(f"{f}|{f.stat().st_size}|{f.stat().st_mtime_ns}" for f in self.files).encode()
        ).hexdigest()[:16]
        return dict.fromkeys(self.billing_periods(), fingerprint)

    def batch(self, billing_period: date, rules: list[CategoryRule], ingested_at: datetime) -> PeriodBatch:
        """The period's lines of every file as FOCUS rows; the raw control totals are the lines'
        count and Σ amount as the files give them. The `cost_categories` rules do not apply: each
        line keeps its file's cost_category."""
        lines = [
            line for manual in self._manual_files for line in manual.lines if line.day.replace(day=1) == billing_period
        ]
        typed: list[Path] = []
        with reading_files(f"cannot read manual cost files {', '.join(map(str, self.files))}", typed):
            for number, manual in enumerate(self._manual_files):
                typed.append(self._typed_file(billing_period, number))
                cost_files.write_typed(manual, typed[-1], source_name=self.name, dimension_tags=self.dimension_tags)
            mapped, _, _ = focus_files.read_delivery(
                typed,
                [str(file) for file in self.files],
                source_name=self.name,
                source_format=self.source_format,
                billing_period=billing_period,
                select_period=True,
                category_rules=cost_files.CATEGORY_RULES,
                ingested_at=ingested_at,
            )
        raw_amount = sum((line.amount for line in lines), Decimal(0))
        batch = self._batch(billing_period, mapped, len(lines), raw_amount, tuple(typed))
        return replace(batch, columns=tuple(self._delivered_columns()))


def open_reader(source: ManualCostsSource, place: ReaderPlace) -> ManualCostsReader:
    """The reader of a `manual_costs` source: its file, or the cost files of its folder."""
    files = list_export_files(place.resolve(source.path), cost_files.SUFFIXES)
    return ManualCostsReader(source.name, files, place.staging_dir, place.dimension_tags)
