"""AWS Data Exports (CUR 2.0 and the AWS FOCUS export): periods, manifests and data files.

Layout (SPEC §4): `<root>/data/BILLING_PERIOD=YYYY-MM/...` and
`<root>/metadata/BILLING_PERIOD=YYYY-MM/<name>-Manifest.json`. Every delivery is a complete
snapshot of its period, and only the files the manifest lists belong to it: older execution
folders stay beside it and are never read.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Protocol

from connectors.errors import SourceError
from connectors.settings import (
    AWS_FOCUS_FORMAT_COLUMN,
    CUR2_DATA_MARKER,
    CUR2_FORMAT_COLUMN,
    CUR2_MANIFEST_SUFFIX,
    CUR2_PERIOD_FOLDER,
)


@dataclass(frozen=True)
class CurDelivery:
    """One delivery of one billing period: what its manifest lists.

    Attributes:
        billing_period: first day of the billing month.
        export_format: `cur2` or `aws_focus`, detected from the manifest's columns.
        manifest: where the manifest was read (path or `s3://` URI).
        execution_id: the manifest's `executionId`.
        files: the data files, local paths ready to scan, in manifest order.
        columns: column names the manifest declares.
    """

    billing_period: date
    export_format: str
    manifest: str
    execution_id: str
    files: tuple[Path, ...]
    columns: tuple[str, ...]


class CurExportClient(Protocol):
    """What the pipelines need from an AWS export location, local or S3."""

    def billing_periods(self) -> list[date]:
        """Billing periods that have a manifest, oldest first."""
        ...

    def delivery(self, billing_period: date) -> CurDelivery:
        """The latest delivery of a period, with its data files available locally."""
        ...


def _period_of(folder_name: str) -> date | None:
    match = CUR2_PERIOD_FOLDER.match(folder_name)
    return date(int(match.group(1)), int(match.group(2)), 1) if match else None


def parse_manifest(text: str, where: str) -> tuple[str, list[str], list[str]]:
    """Validates a CUR 2.0 manifest; returns (executionId, dataFiles, column names).

    Raises:
        SourceError: naming the manifest and the missing or malformed key.
    """
    try:
        document = json.loads(text)
    except json.JSONDecodeError as error:
        raise SourceError(f"manifest {where} is not valid JSON ({error.msg} at line {error.lineno})") from None
    if not isinstance(document, dict):
        raise SourceError(f"manifest {where}: expected a JSON object")
    data_files = document.get("dataFiles")
    if not isinstance(data_files, list) or not all(isinstance(f, str) for f in data_files):
        raise SourceError(f"manifest {where}: key `dataFiles` must be a list of s3:// URIs")
    columns = document.get("columns") or []
    names = [c["name"] for c in columns if isinstance(c, dict) and "name" in c]
    return str(document.get("executionId", "")), data_files, names


def detect_format(columns: list[str], where: str) -> str:
    """`cur2` or `aws_focus` from the manifest's columns."""
    if CUR2_FORMAT_COLUMN in columns:
        return "cur2"
    if AWS_FOCUS_FORMAT_COLUMN in columns:
        return "aws_focus"
    raise SourceError(
        f"manifest {where}: neither a CUR 2.0 export (no column {CUR2_FORMAT_COLUMN}) "
        f"nor an AWS FOCUS export (no column {AWS_FOCUS_FORMAT_COLUMN})"
    )


class LocalCurExportClient:
    """An AWS export copied to a local folder with the S3 layout kept."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def _period_folders(self) -> dict[date, Path]:
        metadata = self.root / "metadata"
        if not metadata.is_dir():
            raise SourceError(f"{self.root}: no metadata/ folder: not an AWS Data Exports (CUR 2.0/FOCUS) layout")
        folders = {}
        for child in metadata.iterdir():
            period = _period_of(child.name)
            if period is not None and child.is_dir():
                folders[period] = child
        return folders

    def billing_periods(self) -> list[date]:
        return sorted(
            period
            for period, folder in self._period_folders().items()
            if any(folder.glob(f"*{CUR2_MANIFEST_SUFFIX}"))
        )

    def delivery(self, billing_period: date) -> CurDelivery:
        folder = self._period_folders().get(billing_period)
        manifests = sorted(folder.glob(f"*{CUR2_MANIFEST_SUFFIX}")) if folder else []
        if not manifests:
            raise SourceError(f"{self.root}: no manifest for billing period {billing_period:%Y-%m}")
        if len(manifests) > 1:
            raise SourceError(f"{folder}: several manifests ({', '.join(m.name for m in manifests)}); expected one per period")
        manifest = manifests[0]
        execution_id, data_files, columns = parse_manifest(manifest.read_text(), str(manifest))
        files = tuple(self._local_file(uri, manifest) for uri in data_files)
        return CurDelivery(
            billing_period=billing_period,
            export_format=detect_format(columns, str(manifest)),
            manifest=str(manifest),
            execution_id=execution_id,
            files=files,
            columns=tuple(columns),
        )

    def _local_file(self, uri: str, manifest: Path) -> Path:
        match = CUR2_DATA_MARKER.search(uri)
        if match is None:
            raise SourceError(f"manifest {manifest}: data file {uri} is not under data/BILLING_PERIOD=YYYY-MM/")
        path = self.root / "data" / match.group(1)
        if not path.is_file():
            raise SourceError(f"manifest {manifest} lists {uri}, but {path} does not exist")
        return path
