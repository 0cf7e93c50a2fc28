"""AWS billing exports in every layout AWS has written, detected from the files.

- CUR 2.0 and the AWS FOCUS export (Data Exports): `<root>/data/BILLING_PERIOD=YYYY-MM/...` and
  `<root>/metadata/BILLING_PERIOD=YYYY-MM/<name>-Manifest.json` (`dataFiles` as s3:// URIs);
  create-new execution folders accumulate beside the latest one.
- Legacy CUR, CSV (or Parquet) with manifests: `<root>/<yyyymmdd>-<yyyymmdd>/<name>-Manifest.json`
  naming the latest delivery's `reportKeys` (bucket keys, prefix included): in an
  `<assemblyId>/` folder (CREATE_NEW, older assemblies stay) or in the period folder itself
  (OVERWRITE).
- Legacy CUR Parquet for Athena: `<root>/<name>/year=YYYY/month=M/*.parquet`, always
  overwritten in place, with `<root>/cost_and_usage_data_status/` saying READY or UPDATING.

Every delivery is a complete snapshot of its period. Only the files the latest manifest lists are
read (the Athena layout has no manifest: its month folder is the delivery). A delivery's
identity covers the manifest's bytes and every data file's version, so an unchanged delivery can
be skipped cheaply and any change (new assembly, execution or overwritten file) is reloaded.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import date
from functools import cached_property
from pathlib import Path
from typing import Protocol

from connectors.aws.settings import (
    AWS_FOCUS_FORMAT_COLUMN,
    CUR2_DATA_MARKER,
    CUR2_FORMAT_COLUMN,
    CUR2_MANIFEST_SUFFIX,
    CUR2_PERIOD_FOLDER,
    LEGACY_MANIFEST_SUFFIX,
    LEGACY_PERIOD_FOLDER,
    PARQUET_MONTH_FOLDER,
    PARQUET_STATUS_FOLDER,
    PARQUET_STATUS_READY,
    PARQUET_YEAR_FOLDER,
)
from connectors.aws.store import ExportStore, LocalExportStore, S3ExportStore, StoredObject
from connectors.errors import SourceError

DATA_EXPORTS = "data_exports"
LEGACY_MANIFESTS = "legacy_manifests"
LEGACY_ATHENA_PARQUET = "legacy_athena_parquet"


class DeliveryNotReady(SourceError):
    """AWS is rewriting the export (status UPDATING): nothing may be read until it is READY."""


@dataclass(frozen=True)
class DeliveryPlan:
    """The latest delivery of a period as its manifest (or listing) describes it; nothing downloaded.

    Attributes:
        billing_period: first day of the billing month.
        export_format: `cur2`, `aws_focus`, `legacy_csv` or `legacy_parquet`.
        manifest: where the manifest was read (path or `s3://` URI), or the Athena month folder.
        execution_id: `executionId` (CUR 2.0), `assemblyId` (legacy), or a listing digest.
        objects: the data files, in manifest order.
        columns: column names the manifest declares (legacy: `category/name`).
        identity: manifest bytes + every data file's version, digested: equal means unchanged.
    """

    billing_period: date
    export_format: str
    manifest: str
    execution_id: str
    objects: tuple[StoredObject, ...]
    columns: tuple[str, ...]
    identity: str


@dataclass(frozen=True)
class CurDelivery:
    """A delivery whose data files are available locally, ready to scan.

    Attributes:
        billing_period, export_format, manifest, execution_id, columns, identity: as in
            `DeliveryPlan`.
        files: local paths of the data files (decompressed), in manifest order.
        locations: where each file was read (its path or `s3://` URI), same order.
    """

    billing_period: date
    export_format: str
    manifest: str
    execution_id: str
    files: tuple[Path, ...]
    columns: tuple[str, ...]
    identity: str = ""
    locations: tuple[str, ...] = ()


class CurExportClient(Protocol):
    """What the pipelines need from an AWS export location, local or S3."""

    def billing_periods(self) -> list[date]:
        """Billing periods that have a delivery, oldest first."""
        ...

    def plan(self, billing_period: date) -> DeliveryPlan:
        """The latest delivery of a period, from its manifest; downloads nothing."""
        ...

    def delivery(self, billing_period: date) -> CurDelivery:
        """The latest delivery of a period, with its data files available locally."""
        ...


def _period_of(folder_name: str) -> date | None:
    match = CUR2_PERIOD_FOLDER.match(folder_name)
    return date(int(match.group(1)), int(match.group(2)), 1) if match else None


def _legacy_period_of(folder_name: str) -> date | None:
    match = LEGACY_PERIOD_FOLDER.match(folder_name)
    return date(int(match.group(1)), int(match.group(2)), 1) if match else None


def _json_object(text: bytes, where: str) -> dict:
    try:
        document = json.loads(text)
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise SourceError(f"manifest {where} is not valid JSON ({error})") from None
    if not isinstance(document, dict):
        raise SourceError(f"manifest {where}: expected a JSON object")
    return document


def _string_list(document: dict, key: str, where: str, meaning: str) -> list[str]:
    values = document.get(key)
    if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
        raise SourceError(f"manifest {where}: key `{key}` must be a list of {meaning}")
    return values


def parse_manifest(text: str | bytes, where: str) -> tuple[str, list[str], list[str]]:
    """Validates a CUR 2.0 manifest; returns (executionId, dataFiles, column names).

    Raises:
        SourceError: naming the manifest and the missing or malformed key.
    """
    document = _json_object(text, where)
    data_files = _string_list(document, "dataFiles", where, "s3:// URIs")
    columns = document.get("columns") or []
    names = [c["name"] for c in columns if isinstance(c, dict) and "name" in c]
    return str(document.get("executionId", "")), data_files, names


def parse_legacy_manifest(text: str | bytes, where: str) -> tuple[str, list[str], list[str]]:
    """Validates a legacy CUR manifest; returns (assemblyId, reportKeys, `category/name` columns).

    Raises:
        SourceError: naming the manifest and the missing or malformed key.
    """
    document = _json_object(text, where)
    report_keys = _string_list(document, "reportKeys", where, "object keys")
    assembly_id = document.get("assemblyId")
    if not isinstance(assembly_id, str) or not assembly_id:
        raise SourceError(f"manifest {where}: key `assemblyId` is missing")
    columns = [
        f"{c['category']}/{c['name']}"
        for c in document.get("columns") or []
        if isinstance(c, dict) and "category" in c and "name" in c
    ]
    return assembly_id, report_keys, columns


def detect_format(columns: list[str], where: str) -> str:
    """`cur2` or `aws_focus` from a Data Exports manifest's columns."""
    if CUR2_FORMAT_COLUMN in columns:
        return "cur2"
    if AWS_FOCUS_FORMAT_COLUMN in columns:
        return "aws_focus"
    raise SourceError(
        f"manifest {where}: neither a CUR 2.0 export (no column {CUR2_FORMAT_COLUMN}) "
        f"nor an AWS FOCUS export (no column {AWS_FOCUS_FORMAT_COLUMN})"
    )


def _identity(manifest: str, manifest_bytes: bytes, objects: tuple[StoredObject, ...]) -> str:
    digest = hashlib.sha256(manifest_bytes)
    for stored in objects:
        digest.update(f"\n{stored.key}|{stored.size}|{stored.version}".encode())
    return f"{manifest}@sha256:{digest.hexdigest()[:20]}"


class AwsExportClient:
    """Any AWS billing export layout in an `ExportStore` (a local folder or an S3 prefix).

    The layout and the period folders are listed once per client (a client lives for one ingest
    step); manifests and data file versions are read on every `plan`.
    """

    def __init__(self, store: ExportStore) -> None:
        self.store = store

    @cached_property
    def layout(self) -> str:
        """The export layout, detected from the root's folders.

        Raises:
            SourceError: when the root holds none of the known layouts.
        """
        top = self.store.folders()
        if PARQUET_STATUS_FOLDER in top:
            return LEGACY_ATHENA_PARQUET
        if "metadata" in top:
            return DATA_EXPORTS
        if any(_legacy_period_of(name) for name in top):
            return LEGACY_MANIFESTS
        raise SourceError(
            f"{self.store.describe()}: no AWS export found: expected metadata/BILLING_PERIOD=YYYY-MM/ "
            "(CUR 2.0, AWS FOCUS), YYYYMMDD-YYYYMMDD/ folders with a manifest (legacy CUR) or "
            f"{PARQUET_STATUS_FOLDER}/ (legacy CUR Parquet for Athena)"
        )

    # ---- periods -------------------------------------------------------------------------
    def billing_periods(self) -> list[date]:
        return sorted(self.period_folders)

    @cached_property
    def period_folders(self) -> dict[date, str]:
        """Each billing period with a delivery and the folder holding its manifest (or data)."""
        if self.layout == DATA_EXPORTS:
            return self._data_export_folders()
        if self.layout == LEGACY_MANIFESTS:
            return self._legacy_folders()
        return self._athena_folders()

    def _manifests_in(self, folder: str, suffix: str) -> list[StoredObject]:
        return [o for o in self.store.objects(folder, recursive=False) if o.key.endswith(suffix)]

    def _data_export_folders(self) -> dict[date, str]:
        folders = {}
        for name in self.store.folders("metadata"):
            period = _period_of(name)
            if period is not None and self._manifests_in(f"metadata/{name}", CUR2_MANIFEST_SUFFIX):
                folders[period] = f"metadata/{name}"
        return folders

    def _legacy_folders(self) -> dict[date, str]:
        return {
            period: name
            for name in self.store.folders()
            if (period := _legacy_period_of(name)) is not None and self._manifests_in(name, LEGACY_MANIFEST_SUFFIX)
        }

    def _athena_report_folder(self) -> str:
        candidates = [
            name
            for name in self.store.folders()
            if name != PARQUET_STATUS_FOLDER and any(PARQUET_YEAR_FOLDER.match(f) for f in self.store.folders(name))
        ]
        if len(candidates) != 1:
            raise SourceError(
                f"{self.store.describe()}: expected one report folder holding year=YYYY/month=M/ beside "
                f"{PARQUET_STATUS_FOLDER}/, found {len(candidates)}: {', '.join(candidates) or 'none'}"
            )
        return candidates[0]

    def _athena_folders(self) -> dict[date, str]:
        report = self._athena_report_folder()
        folders = {}
        for year_name in self.store.folders(report):
            year = PARQUET_YEAR_FOLDER.match(year_name)
            if year is None:
                continue
            for month_name in self.store.folders(f"{report}/{year_name}"):
                month = PARQUET_MONTH_FOLDER.match(month_name)
                if month is not None and 1 <= int(month.group(1)) <= 12:
                    folders[date(int(year.group(1)), int(month.group(1)), 1)] = f"{report}/{year_name}/{month_name}"
        return folders

    # ---- the latest delivery of a period ---------------------------------------------------
    def plan(self, billing_period: date) -> DeliveryPlan:
        if self.layout == DATA_EXPORTS:
            return self._data_export_plan(billing_period)
        if self.layout == LEGACY_MANIFESTS:
            return self._legacy_plan(billing_period)
        return self._athena_plan(billing_period)

    def _single_manifest(self, folder: str | None, suffix: str, billing_period: date) -> StoredObject:
        manifests = self._manifests_in(folder, suffix) if folder else []
        if not manifests:
            raise SourceError(f"{self.store.describe()}: no manifest for billing period {billing_period:%Y-%m}")
        if len(manifests) > 1:
            names = ", ".join(m.key.rsplit("/", 1)[-1] for m in manifests)
            raise SourceError(f"{self.store.describe(folder)}: several manifests ({names}); expected one per period")
        return manifests[0]

    def _listed(self, manifest: str, listed: str, key: str) -> StoredObject:
        try:
            return self.store.stat(key)
        except SourceError as error:
            raise SourceError(f"manifest {manifest} lists {listed}, but {error}") from None

    def _data_export_plan(self, billing_period: date) -> DeliveryPlan:
        manifest = self._single_manifest(self.period_folders.get(billing_period), CUR2_MANIFEST_SUFFIX, billing_period)
        where = self.store.describe(manifest.key)
        content = self.store.read_bytes(manifest.key)
        execution_id, data_files, columns = parse_manifest(content, where)
        objects = []
        for uri in data_files:
            match = CUR2_DATA_MARKER.search(uri)
            if match is None:
                raise SourceError(f"manifest {where}: data file {uri} is not under data/BILLING_PERIOD=YYYY-MM/")
            objects.append(self._listed(where, uri, f"data/{match.group(1)}"))
        return DeliveryPlan(
            billing_period,
            detect_format(columns, where),
            where,
            execution_id,
            tuple(objects),
            tuple(columns),
            _identity(where, content, tuple(objects)),
        )

    def _legacy_plan(self, billing_period: date) -> DeliveryPlan:
        folder = self.period_folders.get(billing_period)
        manifest = self._single_manifest(folder, LEGACY_MANIFEST_SUFFIX, billing_period)
        where = self.store.describe(manifest.key)
        content = self.store.read_bytes(manifest.key)
        assembly_id, report_keys, columns = parse_legacy_manifest(content, where)
        objects = []
        for report_key in report_keys:
            objects.append(self._listed(where, report_key, self._below_period_folder(report_key, folder, where)))
        formats = {"legacy_parquet" if o.key.lower().endswith(".parquet") else "legacy_csv" for o in objects}
        if len(formats) > 1:
            raise SourceError(f"manifest {where}: mixes CSV and Parquet report files")
        return DeliveryPlan(
            billing_period,
            formats.pop() if formats else "legacy_csv",
            where,
            assembly_id,
            tuple(objects),
            tuple(columns),
            _identity(where, content, tuple(objects)),
        )

    @staticmethod
    def _below_period_folder(report_key: str, folder: str, where: str) -> str:
        """A manifest's report key (a bucket key, prefix included) relative to the export root:
        the period folder anchors it, so a local copy resolves the same keys."""
        if report_key.startswith(f"{folder}/"):
            return report_key
        position = report_key.find(f"/{folder}/")
        if position < 0:
            raise SourceError(f"manifest {where}: report key {report_key} is not under the period folder {folder}/")
        return report_key[position + 1 :]

    def _athena_status(self) -> tuple[str, bytes]:
        """The export's status (READY or UPDATING) and the status files' versions."""
        import pyarrow.parquet as pq

        status_files = [o for o in self.store.objects(PARQUET_STATUS_FOLDER) if o.key.endswith(".parquet")]
        if not status_files:
            raise SourceError(f"{self.store.describe(PARQUET_STATUS_FOLDER)}: no status file")
        values = set()
        for stored in status_files:
            path = self.store.local_copy(stored, "status")
            try:
                values.update(pq.read_table(path, columns=["status"]).column("status").to_pylist())
            except (OSError, KeyError, ValueError) as error:
                raise SourceError(
                    f"{self.store.describe(stored.key)}: cannot read the `status` column ({error})"
                ) from None
        status = PARQUET_STATUS_READY if values == {PARQUET_STATUS_READY} else ",".join(sorted(map(str, values)))
        return status, "|".join(f"{o.key}:{o.version}" for o in status_files).encode()

    def _athena_plan(self, billing_period: date) -> DeliveryPlan:
        status, status_versions = self._athena_status()
        if status != PARQUET_STATUS_READY:
            raise DeliveryNotReady(
                f"{self.store.describe(PARQUET_STATUS_FOLDER)} says {status}: AWS is rewriting the export; "
                "it is read once the status is READY again"
            )
        folder = self.period_folders.get(billing_period)
        objects = tuple(o for o in self.store.objects(folder) if o.key.endswith(".parquet")) if folder else ()
        if not objects:
            raise SourceError(f"{self.store.describe()}: no Parquet files for billing period {billing_period:%Y-%m}")
        where = self.store.describe(folder)
        listing_digest = _identity(where, status_versions, objects)
        return DeliveryPlan(
            billing_period, "legacy_parquet", where, listing_digest.rsplit(":", 1)[-1], objects, (), listing_digest
        )

    def delivery(self, billing_period: date) -> CurDelivery:
        plan = self.plan(billing_period)
        return self.fetch(plan)

    def fetch(self, plan: DeliveryPlan) -> CurDelivery:
        """Makes a planned delivery's files local (downloaded, decompressed) and drops stale copies
        of the period from the cache."""
        period_key = f"{plan.billing_period:%Y-%m}"
        files = tuple(
            self.store.local_copy(stored, f"{period_key}/{stored.key.rsplit('/', 1)[0]}") for stored in plan.objects
        )
        self._prune_cache(self.store.cache_dir / period_key, set(files))
        return CurDelivery(
            billing_period=plan.billing_period,
            export_format=plan.export_format,
            manifest=plan.manifest,
            execution_id=plan.execution_id,
            files=files,
            columns=plan.columns,
            identity=plan.identity,
            locations=tuple(self.store.describe(stored.key) for stored in plan.objects),
        )

    @staticmethod
    def _prune_cache(folder: Path, keep: set[Path]) -> None:
        if not folder.is_dir():
            return
        for path in folder.rglob("*"):
            if path.is_file() and path not in keep:
                path.unlink()


def local_export_client(root: Path, cache_dir: Path) -> AwsExportClient:
    """An export copied to a local folder with its S3 layout kept."""
    return AwsExportClient(LocalExportStore(root, cache_dir))


def s3_export_client(uri: str, cache_dir: Path, endpoint_url: str | None = None) -> AwsExportClient:
    """An export under `s3://bucket/prefix/name`, downloaded into `cache_dir` as needed."""
    return AwsExportClient(S3ExportStore(uri, cache_dir, endpoint_url))
