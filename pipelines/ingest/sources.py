"""One reader per configured billing source: its billing periods and, per period, the raw
control totals and the normalized (still lazy) FOCUS rows."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime
from importlib.metadata import version
from pathlib import Path
from typing import Protocol, runtime_checkable

import polars as pl

from connectors.aws_cur import CurExportClient, local_export_client, s3_export_client
from connectors.errors import SourceError
from connectors.local_files import list_export_files
from connectors.settings import FOCUS_SUFFIXES, GCP_EXPORT_SUFFIXES
from pipelines.config import AwsCurSource, BillingSource, ConfigError, FocusSource, GcpBillingSource, RunLedgerConfig
from pipelines.ingest import aws_cur2, aws_legacy_cur, focus_files, gcp_billing
from pipelines.ingest.mappings import CategoryRule


AWS_SOURCE_FORMATS = {
    "cur2": "aws_cur2",
    "aws_focus": "aws_focus",
    "legacy_csv": "aws_legacy_csv",
    "legacy_parquet": "aws_legacy_parquet",
}


@dataclass(frozen=True)
class PeriodBatch:
    """What one load of one (source, billing period) writes, and the raw totals it must match."""

    source_name: str
    source_format: str
    billing_period: date
    delivery: str
    files: tuple[str, ...]
    raw_rows: int
    raw_billed_cost: object
    frame: pl.LazyFrame
    warnings: tuple[str, ...] = ()


class BillingSourceReader(Protocol):
    """A billing source as the ingest step sees it."""

    name: str

    def billing_periods(self) -> list[date]:
        """Billing periods present in the source, oldest first."""
        ...

    def batch(self, billing_period: date, rules: list[CategoryRule], ingested_at: datetime) -> PeriodBatch:
        """The period's normalized rows and raw control totals."""
        ...


class AwsExportReader:
    """Every AWS export layout (legacy CUR CSV or Parquet, CUR 2.0, AWS FOCUS), in S3 or a local
    folder: only the files the period's latest manifest lists."""

    def __init__(self, source: AwsCurSource, client: CurExportClient) -> None:
        self.name = source.name
        self.client = client

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
        # Rows name the file they came from as the user knows it (an s3:// URI), not the cache.
        location_of = pl.col("_source_file").replace(dict(zip(map(str, delivery.files), delivery.locations)))
        if delivery.export_format == "aws_focus":
            raw = focus_files.scan_focus(delivery.files).with_columns(location_of)
            rows, billed = focus_files.raw_control_totals(raw, billing_period)
            frame = focus_files.normalize_focus(
                raw, source_name=self.name, category_rules=rules, ingested_at=ingested_at, source_format=source_format
            )
        else:
            if delivery.export_format == "cur2":
                raw = aws_cur2.scan_cur2(delivery.files)
            else:
                legacy = aws_legacy_cur.scan_legacy(delivery.files, delivery.export_format)
                raw, warnings = legacy.frame, legacy.warnings
            raw = raw.with_columns(location_of)
            try:
                rows, billed = aws_cur2.control_totals(raw)
            except pl.exceptions.PolarsError as error:
                first_line = str(error).strip().splitlines()[0]
                raise SourceError(f"{delivery.manifest}: files {', '.join(delivery.locations)}: {first_line}") from None
            frame = aws_cur2.normalize_cur2(
                raw,
                source_name=self.name,
                billing_period=billing_period,
                execution_id=delivery.execution_id,
                category_rules=rules,
                ingested_at=ingested_at,
                source_format=source_format,
            )
        return PeriodBatch(
            source_name=self.name,
            source_format=source_format,
            billing_period=billing_period,
            delivery=_with_mapping(delivery.identity, rules),
            files=delivery.locations,
            raw_rows=rows,
            raw_billed_cost=billed,
            frame=frame,
            warnings=warnings,
        )


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
        periods = frame.select(self._period_expr(frame).unique().alias("period")).collect()
        return sorted(p for p in periods["period"].to_list() if p is not None)

    def _batch(self, billing_period: date, frame: pl.LazyFrame, rows: int, billed: object) -> PeriodBatch:
        return PeriodBatch(
            source_name=self.name,
            source_format=self.source_format,
            billing_period=billing_period,
            delivery=f"{len(self.files)} files",
            files=tuple(str(f) for f in self.files),
            raw_rows=rows,
            raw_billed_cost=billed,
            frame=frame,
        )


class GcpExportFilesReader(_FileExportReader):
    """A local copy of the GCP billing export (NDJSON or Parquet, BigQuery schema)."""

    source_format = "gcp_billing"

    def _scan(self) -> pl.LazyFrame:
        return gcp_billing.scan_export(self.files)

    def _period_expr(self, frame: pl.LazyFrame) -> pl.Expr:
        return gcp_billing.billing_period_expr()

    def batch(self, billing_period: date, rules: list[CategoryRule], ingested_at: datetime) -> PeriodBatch:
        raw = self._scan()
        rows, billed = gcp_billing.raw_control_totals(raw, billing_period)
        period_rows = raw.filter(gcp_billing.billing_period_expr() == billing_period)
        frame = gcp_billing.normalize_gcp(period_rows, source_name=self.name, category_rules=rules, ingested_at=ingested_at)
        return self._batch(billing_period, frame, rows, billed)


class FocusFilesReader(_FileExportReader):
    """Any FOCUS export in a local file or folder."""

    source_format = "focus"

    def _scan(self) -> pl.LazyFrame:
        return focus_files.scan_focus(self.files)

    def _period_expr(self, frame: pl.LazyFrame) -> pl.Expr:
        return focus_files.billing_period_expr(frame)

    def batch(self, billing_period: date, rules: list[CategoryRule], ingested_at: datetime) -> PeriodBatch:
        raw = self._scan()
        rows, billed = focus_files.raw_control_totals(raw, billing_period)
        period_rows = raw.filter(focus_files.billing_period_expr(raw) == billing_period)
        frame = focus_files.normalize_focus(period_rows, source_name=self.name, category_rules=rules, ingested_at=ingested_at)
        return self._batch(billing_period, frame, rows, billed)


def reader_for(source: BillingSource, config: RunLedgerConfig) -> BillingSourceReader:
    """The reader of a configured billing source.

    Raises:
        ConfigError: for locations this version cannot read yet (BigQuery).
    """
    index = config.sources.index(source)
    if isinstance(source, AwsCurSource):
        cache_dir = config.warehouse_path.parent / "cache" / source.name
        if source.is_local:
            return AwsExportReader(source, local_export_client(config.resolve(source.uri), cache_dir))
        return AwsExportReader(source, s3_export_client(source.uri, cache_dir, source.endpoint_url))
    if isinstance(source, GcpBillingSource):
        if source.path is None:
            raise ConfigError(f"sources[{index}].table: reading from BigQuery is not available yet; point `path` at an export folder")
        return GcpExportFilesReader(source.name, list_export_files(config.resolve(source.path), GCP_EXPORT_SUFFIXES))
    if isinstance(source, FocusSource):
        return FocusFilesReader(source.name, list_export_files(config.resolve(source.path), FOCUS_SUFFIXES))
    raise ConfigError(f"sources[{index}]: kind {source.kind} is not a billing source")
