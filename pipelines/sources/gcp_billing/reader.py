"""The GCP billing export: a local copy of its files (NDJSON or Parquet), or its BigQuery table
read incrementally."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from typing import TYPE_CHECKING

import duckdb
import polars as pl

from connectors.errors import SourceError
from connectors.gcp.settings import GCP_EXPORT_SUFFIXES
from connectors.local.files import list_export_files
from pipelines.sources.base import FileExportReader, PeriodBatch, reading_files, remove_files
from pipelines.sources.gcp_billing import export_rows
from pipelines.sources.gcp_billing.settings import GcpBillingSource
from pipelines.sources.kind import ReaderPlace
from pipelines.sources.mappings import MappingRule
from pipelines.warehouse.sql import read_sql_file

if TYPE_CHECKING:
    from connectors.gcp.billing_export import BigQueryBillingExport, TouchedMonth

EXPORT_STATE = Path(__file__).with_name("export_state.sql")


class GcpExportFilesReader(FileExportReader):
    """A local copy of the GCP billing export (NDJSON or Parquet, BigQuery schema)."""

    source_format = "gcp_billing"

    def _periods(self) -> pl.LazyFrame:
        return export_rows.scan_months(self.files).select(
            export_rows.billing_period_expr().alias("period"), "file", "_row"
        )

    def _place(self, file: str, row: int) -> str:
        return export_rows.place(file, row)

    def _unreadable(self, error: pl.exceptions.PolarsError) -> SourceError:
        return export_rows.unreadable_files_error(self.files, error)

    def _delivered_columns(self) -> list[str]:
        """The fields of the files (of an NDJSON file's first 1,000 rows).

        Raises:
            SourceError: naming a file whose fields cannot be told (e.g. a field that is an object
                in one row and a list in another).
        """
        columns: dict[str, None] = {}
        for file in self.files:
            try:
                if file.name.lower().endswith(".parquet"):
                    schema = pl.scan_parquet(file).collect_schema()
                else:
                    schema = pl.scan_ndjson(file, infer_schema_length=1000).collect_schema()
            except (pl.exceptions.PolarsError, OSError) as error:
                raise SourceError(f"cannot tell the fields of GCP billing export file {file}: {error}") from None
            columns.update(dict.fromkeys(schema.names()))
        return list(columns)

    def delivery_marks(self) -> dict[date, str]:
        """The latest export_time per invoice month: late rows always carry a later one."""
        try:
            latest = (
                export_rows.scan_months(self.files)
                .group_by(export_rows.billing_period_expr().alias("period"))
                .agg(pl.col("export_time").max())
                .collect()
            )
        except pl.exceptions.PolarsError as error:
            raise self._unreadable(error) from None
        return {period: mark for period, mark in latest.iter_rows() if period is not None}

    def batch(self, billing_period: date, rules: list[MappingRule], ingested_at: datetime) -> PeriodBatch:
        """The invoice month's rows of every file: the NDJSON files typed into one Parquet file first."""
        parquet = [file for file in self.files if file.name.lower().endswith(".parquet")]
        ndjson = [file for file in self.files if file not in parquet]
        typed = [self._typed_file(billing_period, 0)] if ndjson else []
        with reading_files(", ".join(map(str, self.files)), typed):
            if ndjson:
                export_rows.write_typed(ndjson, typed[0])
            mapped, rows, billed, _ = export_rows.read_delivery(
                [*typed, *parquet],
                [*([None] if ndjson else []), *map(str, parquet)],
                source_name=self.name,
                billing_period=billing_period,
                category_rules=rules,
                ingested_at=ingested_at,
            )
        return self._batch(billing_period, mapped, rows, billed, tuple(typed))


@dataclass(frozen=True)
class ExportState:
    """What the warehouse holds of a BigQuery billing source: its export_time watermark and, per
    billing period, the latest export_time and the row count of the loaded snapshot."""

    watermark: datetime | None
    snapshots: dict[date, tuple[datetime | None, int | None]]

    @classmethod
    def read(cls, warehouse: duckdb.DuckDBPyConnection | None, source_name: str) -> ExportState:
        """The state recorded in `loads` (none without a warehouse)."""
        if warehouse is None:
            return cls(None, {})
        rows = warehouse.execute(read_sql_file(EXPORT_STATE), {"source_name": source_name}).fetchall()
        return cls(rows[0][3] if rows else None, {period: (snapshot, count) for period, snapshot, count, _ in rows})

    def is_current(self, month: TouchedMonth) -> bool:
        """Whether the loaded snapshot of the month holds its newest exported row and all its rows
        (a batch exported with an older export_time changes only the count)."""
        snapshot, rows = self.snapshots.get(month.billing_period, (None, None))
        return snapshot is not None and snapshot >= month.max_export_time and rows == month.rows


class GcpBigQueryReader:
    """The GCP billing export in BigQuery, read incrementally.

    The invoice months with rows exported since a day before the watermark, and not yet in the
    loaded snapshot (a newer row, or another row count), are pending; each is re-read whole (a
    snapshot, so late rows never double count) and replaces the period. The watermark advances,
    to the newest export_time seen, with the load that leaves no other month pending.
    `full_refresh` lists every invoice month instead.
    """

    source_format = "gcp_billing"

    def __init__(
        self,
        name: str,
        export: BigQueryBillingExport,
        state: ExportState,
        staging_dir: Path,
        *,
        full_refresh: bool = False,
    ) -> None:
        self.name = name
        self.export = export
        self.state = state
        self.staging_dir = staging_dir
        self.full_refresh = full_refresh
        self._touched: list[TouchedMonth] | None = None

    def _touched_months(self) -> list[TouchedMonth]:
        if self._touched is None:
            self._touched = self.export.touched_months(self.state.watermark)
        return self._touched

    def _pending(self) -> list[date]:
        return [m.billing_period for m in self._touched_months() if not self.state.is_current(m)]

    def billing_periods(self) -> list[date]:
        if self.full_refresh:
            return [m.billing_period for m in self.export.touched_months(None)]
        return self._pending()

    def delivery_marks(self) -> dict[date, str]:
        """The latest export_time and row count per invoice month: late rows change one or both."""
        return {
            m.billing_period: f"{m.max_export_time.isoformat()} rows={m.rows}" for m in self.export.touched_months(None)
        }

    def delivery_columns(self, billing_period: date) -> tuple[str, str, list[str]]:
        return self.source_format, self.export.table, list(self.export.table_columns())

    def first_row_of(self, billing_period: date) -> str:
        return f"{self.export.table}, invoice.month {billing_period:%Y%m}"

    def _watermark_after(self, billing_period: date) -> datetime | None:
        """The watermark once this period is loaded: advanced if no other month is pending, and
        never moved back (a backdated batch is older than the watermark)."""
        if any(period != billing_period for period in self._pending()):
            return self.state.watermark
        seen = [m.max_export_time for m in self._touched_months()]
        if self.state.watermark is not None:
            seen.append(self.state.watermark)
        return max(seen, default=None)

    def batch(self, billing_period: date, rules: list[MappingRule], ingested_at: datetime) -> PeriodBatch:
        """The invoice month's snapshot, downloaded and its rows keyed by their content."""
        watermark = self._watermark_after(billing_period)
        stem = self.staging_dir / f"{self.name}-{billing_period:%Y-%m}-{uuid.uuid4().hex}"
        target, keyed = stem.with_suffix(".bigquery.parquet"), stem.with_suffix(".keyed.parquet")
        table = self.export.table
        try:
            snapshot = self.export.download_month(billing_period, target)
            export_rows.key_snapshot(snapshot.file, table, keyed)
            mapped, rows, billed, newest = export_rows.read_delivery(
                [keyed],
                [table],
                source_name=self.name,
                billing_period=billing_period,
                category_rules=rules,
                ingested_at=ingested_at,
            )
            if rows != snapshot.rows:
                raise SourceError(
                    f"{table}, invoice month {billing_period:%Y%m}: {snapshot.rows} rows downloaded, "
                    f"{rows} read back from {target}"
                )
        except BaseException as error:
            remove_files([keyed])
            if isinstance(error, duckdb.Error):
                first_line = str(error).strip().splitlines()[0][:300]
                raise SourceError(f"{table}: {first_line}") from None
            raise
        finally:
            target.unlink(missing_ok=True)
        return PeriodBatch(
            source_name=self.name,
            source_format=self.source_format,
            billing_period=billing_period,
            delivery=f"bigquery {table} invoice.month {billing_period:%Y%m} exported through {newest}",
            files=(table,),
            raw_rows=rows,
            raw_billed_cost=billed,
            mapped=mapped,
            snapshot_export_time=newest,
            watermark=watermark,
            temporary_files=(keyed,),
        )


def open_reader(source: GcpBillingSource, place: ReaderPlace) -> GcpBigQueryReader | GcpExportFilesReader:
    """The reader of a `gcp_billing` source: its BigQuery table, or a local folder of its files."""
    if source.table is not None:
        from connectors.gcp.billing_export import BigQueryBillingExport  # the BigQuery client: only for a table

        export = BigQueryBillingExport.connect(source.table, project=source.project, endpoint_url=source.endpoint_url)
        state = ExportState.read(place.warehouse, source.name)
        return GcpBigQueryReader(source.name, export, state, place.staging_dir, full_refresh=place.full_refresh)
    files = list_export_files(place.resolve(source.path), GCP_EXPORT_SUFFIXES)
    return GcpExportFilesReader(source.name, files, place.staging_dir)
