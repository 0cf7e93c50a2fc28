"""What the ingest step reads of a billing source: one batch per billing period (the delivery
DuckDB maps onto FOCUS and the raw control totals it must match), and the protocols readers
implement."""

from __future__ import annotations

import gzip
import hashlib
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import date, datetime
from importlib.metadata import version
from pathlib import Path
from typing import IO, Protocol, runtime_checkable

import duckdb
import polars as pl

from connectors.errors import SourceError
from pipelines.sources.delivery import MappedDelivery
from pipelines.sources.mappings import MappingRule


@dataclass(frozen=True)
class PeriodBatch:
    """What one load of one (source, billing period) writes, and the raw totals it must match.

    `mapped` is the delivery as DuckDB maps it onto FOCUS while inserting it (or staging it first);
    its files may be copies the reader wrote (`temporary_files`), removed once the load is over.
    """

    source_name: str
    source_format: str
    billing_period: date
    delivery: str
    files: tuple[str, ...]
    raw_rows: int
    raw_billed_cost: object
    mapped: MappedDelivery
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

    def batch(self, billing_period: date, rules: list[MappingRule], ingested_at: datetime) -> PeriodBatch:
        """The period's delivery and raw control totals."""
        ...

    def delivery_marks(self) -> dict[date, str]:
        """Per billing period, a short text that changes exactly when a new delivery arrives
        (a manifest's executionId, the latest export_time); the sensor compares them."""
        ...

    def delivery_columns(self, billing_period: date) -> tuple[str, str, list[str]]:
        """The source format of the period's delivery, where its columns were read, and the
        column names as delivered (for the schema-drift check)."""
        ...

    def first_row_of(self, billing_period: date) -> str:
        """Where the user finds the period's first row: its file and row (or line), or the
        period's delivery."""
        ...


@runtime_checkable
class DeliveryIdentifying(Protocol):
    """A reader that can name its latest delivery cheaply, so an unchanged one is not reloaded."""

    def delivery_identity(self, billing_period: date, rules: list[MappingRule]) -> str:
        """The `loads.delivery` a load of the period's latest delivery would record."""
        ...


def with_mapping(identity: str, rules: list[MappingRule]) -> str:
    """A delivery identity plus the RunLedger version and mapping rules applied to it, so a
    changed mapping reloads an otherwise unchanged delivery."""
    digest = hashlib.sha256(repr((version("runledger"), rules)).encode()).hexdigest()[:12]
    return f"{identity} mapping:{digest}"


def remove_files(files: Sequence[Path]) -> None:
    """Removes the temporary files a reader wrote (those that exist)."""
    for file in files:
        file.unlink(missing_ok=True)


KEPT = "nothing was loaded, the rows loaded before are kept"
BLANK = b"\xef\xbb\xbf \t\r\n"  # what a line that holds no row is made of (a byte order mark, spaces)


def _open_content(file: Path) -> IO[bytes]:
    """The file's content as its reader sees it (a `.gz` file decompressed)."""
    return gzip.open(file) if file.name.lower().endswith(".gz") else file.open("rb")


def _content_digest(file: Path) -> str:
    """The SHA-256 of the file's content (of its bytes when it does not decompress: its reader
    then names what is wrong with it)."""
    try:
        with _open_content(file) as content:
            return hashlib.file_digest(content, "sha256").hexdigest()
    except (OSError, EOFError):
        with file.open("rb") as raw:
            return hashlib.file_digest(raw, "sha256").hexdigest()


def _emptiness(file: Path) -> str | None:
    """Why the file holds no line items (`0 bytes`, `a header and no rows`, ...), or None when it
    holds some or cannot be read (its reader then names what is wrong with it)."""
    if file.stat().st_size == 0:
        return "0 bytes"
    if file.name.lower().endswith(".parquet"):
        import pyarrow as pa  # here: listing a source's periods (`runledger check`) needs no Arrow otherwise
        import pyarrow.parquet as pq

        try:
            return "a schema and no rows" if pq.read_metadata(file).num_rows == 0 else None
        except (OSError, pa.ArrowException):
            return None
    try:
        with _open_content(file) as content:
            lines = (line for line in content if line.strip(BLANK))
            has_header = ".csv" in file.name.lower()
            if has_header:
                next(lines, None)
            if next(lines, None) is None:
                return "a header and no rows" if has_header else "no rows"
    except (OSError, EOFError):
        return None
    return None


def refuse_unusable_files(files: Sequence[Path], locations: Sequence[str], listed_by: str | None = None) -> None:
    """The one rule for the files of a delivery, applied before anything is read or replaced: a
    file listed twice, a file that holds no line items (0 bytes, or a header and no rows: a failed
    or interrupted upload) and two files with the same content (the same spend delivered twice)
    are refused, naming the files.

    Args:
        files: the delivery's files as they are read (local copies).
        locations: where the user finds each file, same order.
        listed_by: what lists the files (a manifest), named when it lists one twice.

    Raises:
        SourceError: naming the file (or both files) at fault.
    """
    listing = listed_by or "the delivery"
    seen: set[str] = set()
    for location in locations:
        if location in seen:
            raise SourceError(
                f"{listing} lists {location} twice: its spend would count twice; {KEPT}. Re-deliver the export "
                "(or fix the listing), then run again"
            )
        seen.add(location)
    for file, location in zip(files, locations):
        emptiness = _emptiness(file)
        if emptiness is not None:
            raise SourceError(
                f"{location}: the file holds no line items ({emptiness}); {KEPT}. A failed or interrupted upload "
                "looks like this: copy the file again, or remove it if the export has no rows there, then run again"
            )
    first_with: dict[str, str] = {}
    for file, location in zip(files, locations):
        original = first_with.setdefault(_content_digest(file), location)
        if original != location:
            raise SourceError(
                f"{original} and {location} have the same content: the same spend delivered twice; {KEPT}. "
                "Remove the copy, then run again"
            )


@contextmanager
def reading_files(where: str, typed: Sequence[Path]) -> Iterator[None]:
    """The block reads a delivery: if it fails, the typed copies written so far go, and a DuckDB
    error becomes a SourceError naming `where` (the files as the user knows them)."""
    try:
        yield
    except BaseException as error:
        remove_files(typed)
        if isinstance(error, duckdb.Error):
            raise SourceError(f"{where}: {str(error).strip().splitlines()[0][:300]}") from None
        raise


class FileExportReader:
    """Exports whose files hold several billing periods: each period's rows are read from all the
    files; typed copies of them are written to `staging_dir`."""

    source_format: str

    def __init__(self, name: str, files: Sequence[Path], staging_dir: Path) -> None:
        self.name = name
        self.files = list(files)
        self.staging_dir = staging_dir

    def _periods(self) -> pl.LazyFrame:
        """The billing period (first day) of each row of the files, as `period`, with its file
        (`file`) and row in it (`_row`, 0-based)."""
        raise NotImplementedError

    def _place(self, file: str, row: int) -> str:
        """A row of a file (0-based) as the messages name it."""
        return f"{file}, row {row + 1}"

    def first_row_of(self, billing_period: date) -> str:
        first = self._periods().filter(pl.col("period") == billing_period).select("file", "_row").head(1).collect()
        return self._place(*first.row(0))

    def billing_periods(self) -> list[date]:
        """The periods the files hold rows of, once the files pass `refuse_unusable_files` (the
        files hold every period, so a file at fault stops every period of the source)."""
        refuse_unusable_files(self.files, [str(file) for file in self.files])
        try:
            periods = self._periods().select(pl.col("period").unique()).collect()
        except pl.exceptions.PolarsError as error:
            raise self._unreadable(error) from None
        if periods.is_empty():
            raise SourceError(f"no line items in {', '.join(map(str, self.files))}; the rows loaded before are kept")
        return sorted(p for p in periods["period"].to_list() if p is not None)

    def _unreadable(self, error: pl.exceptions.PolarsError) -> SourceError:
        """The error for files polars cannot read (a format reader may name the line at fault)."""
        return SourceError(f"cannot read {', '.join(map(str, self.files))}: {error}")

    def delivery_columns(self, billing_period: date) -> tuple[str, str, list[str]]:
        return self.source_format, ", ".join(str(f) for f in self.files), self._delivered_columns()

    def _delivered_columns(self) -> list[str]:
        raise NotImplementedError

    def _typed_file(self, billing_period: date, number: int) -> Path:
        """Where the typed copy of the period's `number`th file is written."""
        self.staging_dir.mkdir(parents=True, exist_ok=True)
        return self.staging_dir / f"{self.name}-{billing_period:%Y-%m}-{uuid.uuid4().hex}-{number:05d}.parquet"

    def _batch(
        self, billing_period: date, mapped: MappedDelivery, rows: int, billed: object, temporary_files: tuple[Path, ...]
    ) -> PeriodBatch:
        return PeriodBatch(
            source_name=self.name,
            source_format=self.source_format,
            billing_period=billing_period,
            delivery=f"{len(self.files)} files",
            files=tuple(str(f) for f in self.files),
            raw_rows=rows,
            raw_billed_cost=billed,
            mapped=mapped,
            temporary_files=temporary_files,
        )
