"""One reader per configured billing source: its billing periods and, per period, the raw
control totals and the normalized (still lazy) FOCUS rows."""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime
from importlib.metadata import version
from pathlib import Path
from typing import Protocol, runtime_checkable

import duckdb
import polars as pl

from connectors.aws.exports import CurExportClient, DeliveryNotReady, local_export_client, s3_export_client
from connectors.errors import SourceError
from connectors.gcp.billing_export import BigQueryBillingExport, TouchedMonth
from connectors.gcp.settings import GCP_EXPORT_SUFFIXES
from connectors.local.files import list_export_files
from connectors.local.settings import FOCUS_SUFFIXES
from pipelines.config import AwsCurSource, BillingSource, ConfigError, FocusSource, GcpBillingSource, RunLedgerConfig
from pipelines.ingest import aws_cur2, aws_legacy_cur, focus_files, gcp_billing
from pipelines.ingest.mappings import CategoryRule
from pipelines.warehouse.sql import read_sql

AWS_SOURCE_FORMATS = {
    "cur2": "aws_cur2",
    "aws_focus": "aws_focus",
    "legacy_csv": "aws_legacy_csv",
    "legacy_parquet": "aws_legacy_parquet",
}


@dataclass(frozen=True)
class PeriodBatch:
    """What one load of one (source, billing period) writes, and the raw totals it must match.

    `frames` are the normalized rows (polars, lazy), staged to Parquet before they are loaded;
    an AWS CUR delivery comes as `cur2` instead, mapped by DuckDB as it is inserted.
    """

    source_name: str
    source_format: str
    billing_period: date
    delivery: str
    files: tuple[str, ...]
    raw_rows: int
    raw_billed_cost: object
    frames: tuple[pl.LazyFrame, ...]
    cur2: aws_cur2.Cur2Delivery | None = None
    snapshot_export_time: datetime | None = None
    watermark: datetime | None = None
    temporary_files: tuple[Path, ...] = ()
    warnings: tuple[str, ...] = ()
    columns: tuple[str, ...] = ()


class BillingSourceReader(Protocol):
    """A billing source as the ingest step sees it."""

    name: str

    def billing_periods(self) -> list[date]:
        """Billing periods present in the source, oldest first."""
        ...

    def batch(self, billing_period: date, rules: list[CategoryRule], ingested_at: datetime) -> PeriodBatch:
        """The period's normalized rows and raw control totals."""
        ...

    def delivery_marks(self) -> dict[date, str]:
        """Per billing period, a short text that changes exactly when a new delivery arrives
        (a manifest's executionId, the latest export_time); the sensor compares them."""
        ...

    def delivery_columns(self, billing_period: date) -> tuple[str, str, list[str]]:
        """The source format of the period's delivery, where its columns were read, and the
        column names as delivered (for the schema-drift check)."""
        ...


class AwsExportReader:
    """Every AWS export layout (legacy CUR CSV or Parquet, CUR 2.0, AWS FOCUS), in S3 or a local
    folder: only the files the period's latest manifest lists."""

    def __init__(self, source: AwsCurSource, client: CurExportClient, staging_dir: Path) -> None:
        self.name = source.name
        self.client = client
        self.staging_dir = staging_dir

    def billing_periods(self) -> list[date]:
        return self.client.billing_periods()

    def delivery_identity(self, billing_period: date, rules: list[CategoryRule]) -> str:
        """What a load of the period's latest delivery records as `loads.delivery`: the manifest's
        identity and the mapping it is normalized with; reads the manifest only."""
        return _with_mapping(self.client.plan(billing_period).identity, rules)

    def batch(self, billing_period: date, rules: list[CategoryRule], ingested_at: datetime) -> PeriodBatch:
        delivery = self.client.delivery(billing_period)
        source_format = AWS_SOURCE_FORMATS[delivery.export_format]
        warnings: tuple[str, ...] = ()
        columns: tuple[str, ...] = ()
        frames: tuple[pl.LazyFrame, ...] = ()
        cur2 = None
        temporary_files: tuple[Path, ...] = ()
        # Rows name the file they came from as the user knows it (an s3:// URI), not the cache.
        location_of = pl.col("_source_file").replace(dict(zip(map(str, delivery.files), delivery.locations)))
        try:
            if delivery.export_format == "aws_focus":
                raw = focus_files.scan_focus(delivery.files).with_columns(location_of)
                columns = tuple(c for c in raw.collect_schema().names() if c not in ("_row", "_source_file"))
                rows, billed = focus_files.raw_control_totals(raw, billing_period, delivery.locations)
                frames = (
                    focus_files.normalize_focus(
                        raw,
                        source_name=self.name,
                        category_rules=rules,
                        ingested_at=ingested_at,
                        source_format=source_format,
                    ),
                )
            else:
                if delivery.export_format == "cur2":
                    columns = aws_cur2.delivered_columns(delivery.files)
                    files, locations = tuple(delivery.files), tuple(delivery.locations)
                else:
                    legacy = aws_legacy_cur.scan_legacy(delivery.files, delivery.export_format)
                    warnings, columns = legacy.warnings, legacy.columns
                    converted = self.staging_dir / f"{self.name}-{billing_period:%Y-%m}-{uuid.uuid4().hex}.cur2.parquet"
                    temporary_files = (converted,)
                    files, locations = (converted,), (None,)
                    self.staging_dir.mkdir(parents=True, exist_ok=True)
                    aws_legacy_cur.write_as_cur2(legacy.frame.with_columns(location_of), converted)
                cur2, rows, billed = aws_cur2.read_delivery(
                    files,
                    locations,
                    source_name=self.name,
                    source_format=source_format,
                    billing_period=billing_period,
                    execution_id=delivery.execution_id,
                    category_rules=rules,
                    ingested_at=ingested_at,
                )
        except BaseException as error:
            for file in temporary_files:
                file.unlink(missing_ok=True)
            if isinstance(error, (pl.exceptions.PolarsError, duckdb.Error)):
                first_line = str(error).strip().splitlines()[0]
                raise SourceError(f"{delivery.manifest}: files {', '.join(delivery.locations)}: {first_line}") from None
            if isinstance(error, SourceError):
                # name the files as the user knows them (s3:// or the export folder), not the cache
                message = str(error)
                for file, location in zip(delivery.files, delivery.locations):
                    message = message.replace(str(file), location)
                raise SourceError(message) from None
            raise
        return PeriodBatch(
            source_name=self.name,
            source_format=source_format,
            billing_period=billing_period,
            delivery=_with_mapping(delivery.identity, rules),
            files=delivery.locations,
            raw_rows=rows,
            raw_billed_cost=billed,
            frames=frames,
            cur2=cur2,
            temporary_files=temporary_files,
            warnings=warnings,
            columns=columns,
        )

    def delivery_marks(self) -> dict[date, str]:
        """The digest of each period's manifest and data file versions (reads manifests and
        listings only): it changes with a new execution or assembly and with an overwrite."""
        marks = {}
        for billing_period in self.billing_periods():
            try:
                marks[billing_period] = self.client.plan(billing_period).identity
            except DeliveryNotReady:
                continue
        return marks

    def delivery_columns(self, billing_period: date) -> tuple[str, str, list[str]]:
        """The columns the period's manifest declares (AWS writes the export's schema there)."""
        plan = self.client.plan(billing_period)
        return AWS_SOURCE_FORMATS[plan.export_format], plan.manifest, list(plan.columns)


def _with_mapping(identity: str, rules: list[CategoryRule]) -> str:
    """A delivery identity plus the RunLedger version and cost category rules applied to it, so a
    changed mapping reloads an otherwise unchanged delivery."""
    digest = hashlib.sha256(repr((version("runledger"), rules)).encode()).hexdigest()[:12]
    return f"{identity} mapping:{digest}"


@runtime_checkable
class DeliveryIdentifying(Protocol):
    """A reader that can name its latest delivery cheaply, so an unchanged one is not reloaded."""

    def delivery_identity(self, billing_period: date, rules: list[CategoryRule]) -> str:
        """The `loads.delivery` a load of the period's latest delivery would record."""
        ...


class _FileExportReader:
    """Exports whose files hold several billing periods: each period is filtered from all files."""

    source_format: str

    def __init__(self, name: str, files: Sequence[Path]) -> None:
        self.name = name
        self.files = list(files)

    def _scan(self) -> pl.LazyFrame:
        raise NotImplementedError

    def _period_expr(self, frame: pl.LazyFrame) -> pl.Expr:
        raise NotImplementedError

    def billing_periods(self) -> list[date]:
        frame = self._scan()
        try:
            periods = frame.select(self._period_expr(frame).unique().alias("period")).collect()
        except pl.exceptions.PolarsError as error:
            raise SourceError(f"cannot read {', '.join(map(str, self.files))}: {error}") from None
        if periods.is_empty():
            raise SourceError(f"no line items in {', '.join(map(str, self.files))}; the rows loaded before are kept")
        return sorted(p for p in periods["period"].to_list() if p is not None)

    def delivery_columns(self, billing_period: date) -> tuple[str, str, list[str]]:
        return self.source_format, ", ".join(str(f) for f in self.files), self._delivered_columns()

    def _delivered_columns(self) -> list[str]:
        raise NotImplementedError

    def _batch(self, billing_period: date, frame: pl.LazyFrame, rows: int, billed: object) -> PeriodBatch:
        return PeriodBatch(
            source_name=self.name,
            source_format=self.source_format,
            billing_period=billing_period,
            delivery=f"{len(self.files)} files",
            files=tuple(str(f) for f in self.files),
            raw_rows=rows,
            raw_billed_cost=billed,
            frames=(frame,),
        )


class GcpExportFilesReader(_FileExportReader):
    """A local copy of the GCP billing export (NDJSON or Parquet, BigQuery schema)."""

    source_format = "gcp_billing"

    def _scan(self) -> pl.LazyFrame:
        return gcp_billing.scan_export(self.files)

    def _period_expr(self, frame: pl.LazyFrame) -> pl.Expr:
        return gcp_billing.billing_period_expr()

    def _delivered_columns(self) -> list[str]:
        columns: dict[str, None] = {}
        for file in self.files:
            if file.name.lower().endswith(".parquet"):
                schema = pl.scan_parquet(file).collect_schema()
            else:
                schema = pl.scan_ndjson(file, infer_schema_length=1000).collect_schema()
            columns.update(dict.fromkeys(schema.names()))
        return list(columns)

    def delivery_marks(self) -> dict[date, str]:
        """The latest export_time per invoice month: late rows always carry a later one."""
        latest = (
            self._scan()
            .group_by(gcp_billing.billing_period_expr().alias("period"))
            .agg(pl.col("export_time").max())
            .collect()
        )
        return {period: mark for period, mark in latest.iter_rows() if period is not None}

    def batch(self, billing_period: date, rules: list[CategoryRule], ingested_at: datetime) -> PeriodBatch:
        raw = self._scan()
        rows, billed = gcp_billing.raw_control_totals(raw, billing_period, ", ".join(map(str, self.files)))
        period_rows = raw.filter(gcp_billing.billing_period_expr() == billing_period)
        frame = gcp_billing.normalize_gcp(
            period_rows, source_name=self.name, category_rules=rules, ingested_at=ingested_at
        )
        return self._batch(billing_period, frame, rows, billed)


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
        rows = warehouse.execute(read_sql("ops/loads", "gcp_export_state"), {"source_name": source_name}).fetchall()
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

    def _watermark_after(self, billing_period: date) -> datetime | None:
        """The watermark once this period is loaded: advanced if no other month is pending, and
        never moved back (a backdated batch is older than the watermark)."""
        if any(period != billing_period for period in self._pending()):
            return self.state.watermark
        seen = [m.max_export_time for m in self._touched_months()]
        if self.state.watermark is not None:
            seen.append(self.state.watermark)
        return max(seen, default=None)

    def batch(self, billing_period: date, rules: list[CategoryRule], ingested_at: datetime) -> PeriodBatch:
        watermark = self._watermark_after(billing_period)
        target = self.staging_dir / f"{self.name}-{billing_period:%Y-%m}-{uuid.uuid4().hex}.bigquery.parquet"
        try:
            snapshot = self.export.download_month(billing_period, target)
            raw = gcp_billing.scan_snapshot(snapshot.file, self.export.table)
            rows, billed = gcp_billing.raw_control_totals(raw, billing_period, self.export.table)
            if rows != snapshot.rows:
                raise SourceError(
                    f"{self.export.table}, invoice month {billing_period:%Y%m}: {snapshot.rows} rows downloaded, "
                    f"{rows} read back from {target}"
                )
            newest = raw.select(pl.col("export_time").max()).collect().item()
        except BaseException:
            target.unlink(missing_ok=True)
            raise
        frame = gcp_billing.normalize_gcp(raw, source_name=self.name, category_rules=rules, ingested_at=ingested_at)
        return PeriodBatch(
            source_name=self.name,
            source_format=self.source_format,
            billing_period=billing_period,
            delivery=f"bigquery {self.export.table} invoice.month {billing_period:%Y%m} exported through {newest}",
            files=(self.export.table,),
            raw_rows=rows,
            raw_billed_cost=billed,
            frames=(frame,),
            snapshot_export_time=newest,
            watermark=watermark,
            temporary_files=(target,),
        )


class FocusFilesReader(_FileExportReader):
    """Any FOCUS export in a local file or folder."""

    source_format = "focus"

    def _scan(self) -> pl.LazyFrame:
        return focus_files.scan_focus(self.files)

    def _period_expr(self, frame: pl.LazyFrame) -> pl.Expr:
        return focus_files.billing_period_expr(frame)

    def _delivered_columns(self) -> list[str]:
        return focus_files.scan_focus(self.files).drop("_row", "_source_file").collect_schema().names()

    def delivery_marks(self) -> dict[date, str]:
        """FOCUS files carry no delivery time: any change to a file (name, size, modification
        time) marks every period the files hold as delivered again."""
        fingerprint = hashlib.sha256(
            "\n".join(f"{f}|{f.stat().st_size}|{f.stat().st_mtime_ns}" for f in self.files).encode()
        ).hexdigest()[:16]
        return dict.fromkeys(self.billing_periods(), fingerprint)

    def batch(self, billing_period: date, rules: list[CategoryRule], ingested_at: datetime) -> PeriodBatch:
        raw = self._scan()
        rows, billed = focus_files.raw_control_totals(raw, billing_period, self.files)
        period_rows = raw.filter(focus_files.billing_period_expr(raw) == billing_period)
        frame = focus_files.normalize_focus(
            period_rows, source_name=self.name, category_rules=rules, ingested_at=ingested_at
        )
        return self._batch(billing_period, frame, rows, billed)


def reader_for(
    source: BillingSource,
    config: RunLedgerConfig,
    *,
    warehouse: duckdb.DuckDBPyConnection | None = None,
    full_refresh: bool = False,
) -> BillingSourceReader:
    """The reader of a configured billing source.

    Args:
        source: the configured source.
        config: the whole configuration (paths resolve against it).
        warehouse: where incremental sources (BigQuery) find their watermark; None reads them
            as if nothing was loaded yet.
        full_refresh: incremental sources list every billing period, not only those with new rows.

    Raises:
        ConfigError: for locations this version cannot read yet (BigQuery).
    """
    index = config.sources.index(source)
    if isinstance(source, AwsCurSource):
        cache_dir = config.lake.cache_dir / source.name
        staging = config.lake.staging_dir
        if source.is_local:
            return AwsExportReader(source, local_export_client(config.resolve(source.uri), cache_dir), staging)
        return AwsExportReader(source, s3_export_client(source.uri, cache_dir, source.endpoint_url), staging)
    if isinstance(source, GcpBillingSource):
        if source.table is not None:
            export = BigQueryBillingExport.connect(
                source.table, project=source.project, endpoint_url=source.endpoint_url
            )
            state = ExportState.read(warehouse, source.name)
            staging = config.lake.staging_dir
            return GcpBigQueryReader(source.name, export, state, staging, full_refresh=full_refresh)
        return GcpExportFilesReader(source.name, list_export_files(config.resolve(source.path), GCP_EXPORT_SUFFIXES))
    if isinstance(source, FocusSource):
        return FocusFilesReader(source.name, list_export_files(config.resolve(source.path), FOCUS_SUFFIXES))
    raise ConfigError(f"sources[{index}]: kind {source.kind} is not a billing source")
