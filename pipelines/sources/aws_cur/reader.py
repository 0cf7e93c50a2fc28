"""Every AWS export layout (legacy CUR CSV or Parquet, CUR 2.0, AWS FOCUS), in S3 or a local
folder: only the files the period's latest manifest lists."""

from __future__ import annotations

import uuid
from datetime import date, datetime
from pathlib import Path

import duckdb
import polars as pl

from connectors.aws.exports import CurExportClient, DeliveryNotReady, local_export_client, s3_export_client
from connectors.errors import SourceError
from pipelines.sources import focus_files
from pipelines.sources.aws_cur import AWS_SOURCE_FORMATS, cur2, legacy_cur
from pipelines.sources.aws_cur.settings import AwsCurSource
from pipelines.sources.base import PeriodBatch, refuse_unusable_files, remove_files, with_mapping
from pipelines.sources.delivery import MappedDelivery
from pipelines.sources.kind import ReaderPlace
from pipelines.sources.mappings import MappingRule


class AwsExportReader:
    """An AWS export: the period's latest delivery, as its manifest lists it."""

    def __init__(self, source: AwsCurSource, client: CurExportClient, staging_dir: Path) -> None:
        self.name = source.name
        self.client = client
        self.staging_dir = staging_dir

    def billing_periods(self) -> list[date]:
        return self.client.billing_periods()

    def delivery_identity(self, billing_period: date, rules: list[MappingRule]) -> str:
        """What a load of the period's latest delivery records as `loads.delivery`: the manifest's
        identity and the mapping it is normalized with; reads the manifest only."""
        return with_mapping(self.client.plan(billing_period).identity, rules)

    def _staged_file(self, billing_period: date, suffix: str) -> Path:
        self.staging_dir.mkdir(parents=True, exist_ok=True)
        return self.staging_dir / f"{self.name}-{billing_period:%Y-%m}-{uuid.uuid4().hex}{suffix}"

    def batch(self, billing_period: date, rules: list[MappingRule], ingested_at: datetime) -> PeriodBatch:
        delivery = self.client.delivery(billing_period)
        refuse_unusable_files(delivery.files, delivery.locations, listed_by=delivery.manifest)
        source_format = AWS_SOURCE_FORMATS[delivery.export_format]
        warnings: tuple[str, ...] = ()
        columns: tuple[str, ...] = ()
        temporary_files: list[Path] = []
        mapped: MappedDelivery
        try:
            if delivery.export_format == "aws_focus":
                columns = tuple(focus_files.delivered_columns(delivery.files))
                for number, file in enumerate(delivery.files):
                    temporary_files.append(self._staged_file(billing_period, f"-{number:05d}.focus.parquet"))
                    focus_files.write_typed(file, temporary_files[-1])
                mapped, rows, billed = focus_files.read_delivery(
                    temporary_files,
                    delivery.locations,
                    source_name=self.name,
                    source_format=source_format,
                    billing_period=billing_period,
                    select_period=False,
                    category_rules=rules,
                    ingested_at=ingested_at,
                )
            else:
                if delivery.export_format == "cur2":
                    columns = cur2.delivered_columns(delivery.files)
                    files, locations = tuple(delivery.files), tuple(delivery.locations)
                else:
                    legacy = legacy_cur.scan_legacy(delivery.files, delivery.export_format)
                    warnings, columns = legacy.warnings, legacy.columns
                    converted = self._staged_file(billing_period, ".cur2.parquet")
                    temporary_files.append(converted)
                    files, locations = (converted,), (None,)
                    # rows name the file they came from as the user knows it (an s3:// URI), not the cache
                    location_of = pl.col("_source_file").replace(
                        dict(zip(map(str, delivery.files), delivery.locations))
                    )
                    legacy_cur.write_as_cur2(legacy.frame.with_columns(location_of), converted)
                mapped, rows, billed = cur2.read_delivery(
                    files,
                    locations,
                    source_name=self.name,
                    source_format=source_format,
                    billing_period=billing_period,
                    execution_id=delivery.execution_id,
                    category_rules=rules,
                    ingested_at=ingested_at,
                    amounts_as_text=delivery.export_format == "legacy_csv",
                )
        except BaseException as error:
            remove_files(temporary_files)
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
            delivery=with_mapping(delivery.identity, rules),
            files=delivery.locations,
            raw_rows=rows,
            raw_billed_cost=billed,
            mapped=mapped,
            temporary_files=tuple(temporary_files),
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

    def first_row_of(self, billing_period: date) -> str:
        """The period's manifest (or its folder, when it has none ready)."""
        try:
            return self.client.plan(billing_period).manifest
        except (DeliveryNotReady, SourceError):
            return f"the delivery of billing period {billing_period:%Y-%m}"

    def delivery_columns(self, billing_period: date) -> tuple[str, str, list[str]]:
        """The columns the period's manifest declares (AWS writes the export's schema there)."""
        plan = self.client.plan(billing_period)
        return AWS_SOURCE_FORMATS[plan.export_format], plan.manifest, list(plan.columns)


def open_reader(source: AwsCurSource, place: ReaderPlace) -> AwsExportReader:
    """The reader of an `aws_cur` source: its exports in S3 or a local folder."""
    if source.is_local:
        client = local_export_client(place.resolve(source.uri), place.cache_dir)
    else:
        client = s3_export_client(source.uri, place.cache_dir, source.endpoint_url)
    return AwsExportReader(source, client, place.staging_dir)
