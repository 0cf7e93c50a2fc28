"""Where an AWS billing export lives: a local folder or an S3 prefix, behind one small interface.

Keys are relative to the export root (the configured `uri`), with `/` separators. The S3 store
lists with paginators, reads manifests, and streams data files into a local cache folder, so the
polars readers scan local files and no export is ever held in memory whole.
"""

from __future__ import annotations

import gzip
import hashlib
import shutil
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Protocol

from connectors.aws.settings import AWS_MAX_ATTEMPTS, AWS_RETRY_MODE
from connectors.errors import SourceError

COPY_CHUNK_BYTES = 8 * 1024 * 1024


@dataclass(frozen=True)
class StoredObject:
    """One object (file) of an export: its key below the root, size and version tag."""

    key: str
    size: int
    version: str


class ExportStore(Protocol):
    """What the CUR layouts need from a location."""

    def describe(self, key: str = "") -> str:
        """The location of a key as a user would look it up (path or s3:// URI)."""
        ...

    def folders(self, prefix: str = "") -> list[str]:
        """Names of the folders directly below `prefix` (no trailing slash)."""
        ...

    cache_dir: Path

    def objects(self, prefix: str, *, recursive: bool = True) -> list[StoredObject]:
        """The objects below `prefix` (directly in it unless `recursive`), sorted by key."""
        ...

    def stat(self, key: str) -> StoredObject:
        """The object at `key`; a SourceError naming it when it is missing or cannot be read."""
        ...

    def read_bytes(self, key: str) -> bytes:
        """A small object's content (manifests, status files)."""
        ...

    def local_copy(self, stored: StoredObject, cache_key: str) -> Path:
        """A local, scannable file with the object's content: `.gz` and `.zip` are decompressed."""
        ...


def _decompressed_name(key: str) -> str:
    name = key.rsplit("/", 1)[-1]
    for suffix in (".gz", ".zip"):
        if name.lower().endswith(suffix):
            return name[: -len(suffix)]
    return name


def _write_decompressed(source: IO[bytes], key: str, target: Path, where: str) -> None:
    """Streams `source` into `target`, gunzipping or unzipping by the key's suffix."""
    partial = target.with_name(target.name + ".partial")
    try:
        with partial.open("wb") as out:
            if key.lower().endswith(".gz"):
                with gzip.GzipFile(fileobj=source) as unpacked:
                    shutil.copyfileobj(unpacked, out, COPY_CHUNK_BYTES)
            elif key.lower().endswith(".zip"):
                with zipfile.ZipFile(source) as archive:
                    members = [m for m in archive.infolist() if not m.is_dir()]
                    if len(members) != 1:
                        raise SourceError(f"{where}: expected one file in the zip archive, found {len(members)}")
                    with archive.open(members[0]) as unpacked:
                        shutil.copyfileobj(unpacked, out, COPY_CHUNK_BYTES)
            else:
                shutil.copyfileobj(source, out, COPY_CHUNK_BYTES)
    except (OSError, EOFError, zipfile.BadZipFile) as error:
        partial.unlink(missing_ok=True)
        raise SourceError(f"{where}: cannot decompress ({error})") from None
    partial.replace(target)


class LocalExportStore:
    """An export copied to a local folder with its S3 layout kept."""

    def __init__(self, root: Path, cache_dir: Path) -> None:
        self.root = root
        self.cache_dir = cache_dir

    def describe(self, key: str = "") -> str:
        return str(self.root / key) if key else str(self.root)

    def folders(self, prefix: str = "") -> list[str]:
        folder = self.root / prefix
        return sorted(child.name for child in folder.iterdir() if child.is_dir()) if folder.is_dir() else []

    def objects(self, prefix: str, *, recursive: bool = True) -> list[StoredObject]:
        folder = self.root / prefix
        if not folder.is_dir():
            return []
        found = []
        for path in folder.rglob("*") if recursive else folder.iterdir():
            if path.is_file():
                stat = path.stat()
                found.append(StoredObject(path.relative_to(self.root).as_posix(), stat.st_size, str(stat.st_mtime_ns)))
        return sorted(found, key=lambda o: o.key)

    def stat(self, key: str) -> StoredObject:
        """The object at `key`; a SourceError naming the path when it does not exist."""
        path = self.root / key
        if not path.is_file():
            raise SourceError(f"{path} does not exist")
        stat = path.stat()
        return StoredObject(key, stat.st_size, str(stat.st_mtime_ns))

    def read_bytes(self, key: str) -> bytes:
        self.stat(key)
        return (self.root / key).read_bytes()

    def local_copy(self, stored: StoredObject, cache_key: str) -> Path:
        path = self.root / stored.key
        if not stored.key.lower().endswith((".gz", ".zip")):
            return path
        target = _cached_path(self.cache_dir, cache_key, stored)
        if not target.is_file():
            with path.open("rb") as source:
                _write_decompressed(source, stored.key, target, str(path))
        return target


def _cached_path(cache_dir: Path, cache_key: str, stored: StoredObject) -> Path:
    """Cache file of an object version: a changed object (OVERWRITE mode) gets a new name."""
    version = hashlib.sha256(f"{stored.version}|{stored.size}".encode()).hexdigest()[:12]
    folder = cache_dir / cache_key
    folder.mkdir(parents=True, exist_ok=True)
    return folder / f"{version}-{_decompressed_name(stored.key)}"


def s3_client(endpoint_url: str | None) -> Any:
    """An S3 client from the standard credential chain, retrying throttling with backoff."""
    import boto3
    from botocore.config import Config

    return boto3.session.Session().client(
        "s3",
        endpoint_url=endpoint_url,
        config=Config(retries={"mode": AWS_RETRY_MODE, "max_attempts": AWS_MAX_ATTEMPTS}),
    )


def split_s3_uri(uri: str) -> tuple[str, str]:
    """(bucket, key prefix without trailing slash) of an `s3://bucket/prefix` URI."""
    if not uri.startswith("s3://"):
        raise SourceError(f"{uri}: not an s3:// URI")
    bucket, _, prefix = uri[len("s3://") :].partition("/")
    if not bucket:
        raise SourceError(f"{uri}: no bucket name")
    return bucket, prefix.strip("/")


class S3ExportStore:
    """An export under an S3 prefix (or an S3-compatible store at `endpoint_url`)."""

    def __init__(self, uri: str, cache_dir: Path, endpoint_url: str | None = None) -> None:
        self.bucket, self.prefix = split_s3_uri(uri)
        self.cache_dir = cache_dir
        self.endpoint_url = endpoint_url
        self._client = None

    @property
    def client(self) -> Any:
        """The boto3 S3 client, built on first use (never at construction or import)."""
        if self._client is None:
            self._client = s3_client(self.endpoint_url)
        return self._client

    def _full_key(self, key: str) -> str:
        return f"{self.prefix}/{key}" if self.prefix and key else (self.prefix or key)

    def describe(self, key: str = "") -> str:
        return f"s3://{self.bucket}/{self._full_key(key)}"

    def _call(self, what: str, key: str, function: Callable[..., Any], **kwargs: object) -> Any:
        """Calls a client method; AWS errors become a SourceError naming bucket, key and code."""
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            return function(**kwargs)
        except ClientError as error:
            code = error.response.get("Error", {}).get("Code", "error")
            message = error.response.get("Error", {}).get("Message", "")
            raise SourceError(f"{what} {self.describe(key)}: {code} {message}".rstrip()) from None
        except BotoCoreError as error:
            raise SourceError(f"{what} {self.describe(key)}: {error}") from None

    def _pages(self, prefix: str, **extra: object) -> Iterator[dict]:
        from botocore.exceptions import BotoCoreError, ClientError

        paginator = self.client.get_paginator("list_objects_v2")
        full = self._full_key(prefix)
        try:
            yield from paginator.paginate(Bucket=self.bucket, Prefix=f"{full}/" if full else "", **extra)
        except ClientError as error:
            code = error.response.get("Error", {}).get("Code", "error")
            raise SourceError(
                f"cannot list {self.describe(prefix)}: {code} (needs s3:ListBucket on the bucket)"
            ) from None
        except BotoCoreError as error:
            raise SourceError(f"cannot list {self.describe(prefix)}: {error}") from None

    def _relative(self, full_key: str) -> str:
        return full_key[len(self.prefix) + 1 :] if self.prefix else full_key

    def folders(self, prefix: str = "") -> list[str]:
        names = []
        for page in self._pages(prefix, Delimiter="/"):
            for common in page.get("CommonPrefixes", []):
                names.append(common["Prefix"].rstrip("/").rsplit("/", 1)[-1])
        return sorted(names)

    def objects(self, prefix: str, *, recursive: bool = True) -> list[StoredObject]:
        found = []
        for page in self._pages(prefix) if recursive else self._pages(prefix, Delimiter="/"):
            for item in page.get("Contents", []):
                if not item["Key"].endswith("/"):
                    found.append(
                        StoredObject(self._relative(item["Key"]), int(item["Size"]), item.get("ETag", "").strip('"'))
                    )
        return sorted(found, key=lambda o: o.key)

    def stat(self, key: str) -> StoredObject:
        """The object at `key`; a SourceError naming bucket and key when it is missing or denied."""
        head = self._call("cannot read", key, self.client.head_object, Bucket=self.bucket, Key=self._full_key(key))
        return StoredObject(key, int(head["ContentLength"]), head.get("ETag", "").strip('"'))

    def read_bytes(self, key: str) -> bytes:
        response = self._call("cannot read", key, self.client.get_object, Bucket=self.bucket, Key=self._full_key(key))
        return response["Body"].read()

    def local_copy(self, stored: StoredObject, cache_key: str) -> Path:
        target = _cached_path(self.cache_dir, cache_key, stored)
        if target.is_file():
            return target
        compressed = stored.key.lower().endswith((".gz", ".zip"))
        download = target.with_name(target.name + (".download" if compressed else ".partial"))
        try:
            with download.open("wb") as out:
                self._call(
                    "cannot download",
                    stored.key,
                    self.client.download_fileobj,
                    Bucket=self.bucket,
                    Key=self._full_key(stored.key),
                    Fileobj=out,
                )
            if compressed:
                with download.open("rb") as source:
                    _write_decompressed(source, stored.key, target, self.describe(stored.key))
            else:
                download.replace(target)
        finally:
            download.unlink(missing_ok=True)
        return target
