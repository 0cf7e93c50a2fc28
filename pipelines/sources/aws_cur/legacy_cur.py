"""Legacy AWS CUR (CSV `lineItem/UnblendedCost` headers, or their Parquet snake-case names) as the
CUR 2.0 columns, written to a Parquet file so one mapping (`aws_cur2`) serves every AWS format.

Column names become their Parquet spelling, which is the CUR 2.0 spelling: each part
snake-cased, every capital preceded by `_`, any other symbol `_` (`reservation/ReservationARN` →
`reservation_reservation_a_r_n`). Resource tag columns become the `resource_tags` key/value
list: CSV keys stay as AWS wrote them (`user:Cost Center`), Parquet keys are what follows
`resource_tags_` (`user_cost_center`, as in CUR 2.0). CSV tag keys that collide after
snake-casing (`user:Cost Center`, `user:cost-center`) are both kept and reported.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from connectors.errors import SourceError, missing_columns_error
from pipelines.sources.aws_cur.cur2 import REQUIRED_COLUMNS

TAGS = pl.List(pl.Struct({"key": pl.String, "value": pl.String}))
CSV_TAG_CATEGORY = "resourceTags/"
PARQUET_TAG_PREFIX = "resource_tags_"
DROPPED_CSV_CATEGORIES = ("costCategory/",)
TIMESTAMP_COLUMNS = (
    "bill_billing_period_start_date",
    "bill_billing_period_end_date",
    "line_item_usage_start_date",
    "line_item_usage_end_date",
)
CUR_TIMESTAMP_SUFFIX = r"(\.\d+)?Z$"


@dataclass(frozen=True)
class LegacyScan:
    """A legacy delivery as CUR 2.0 columns (lazy), what the conversion has to report, and the
    columns the files have, as they write them."""

    frame: pl.LazyFrame
    warnings: tuple[str, ...]
    columns: tuple[str, ...]


def parquet_column_name(csv_name: str) -> str:
    """The Parquet (and CUR 2.0) name of a legacy CSV header: `lineItem/UnblendedCost` →
    `line_item_unblended_cost`, `resourceTags/user:Cost Center` → `resource_tags_user_cost_center`."""
    return "_".join(_snake(part) for part in csv_name.split("/", 1))


def _snake(part: str) -> str:
    spaced = re.sub(r"([A-Z])", r"_\1", part).lower()
    return re.sub(r"[^a-z0-9]+", "_", spaced).strip("_")


def _timestamps(frame: pl.LazyFrame) -> pl.LazyFrame:
    """CUR text timestamps (`2023-11-01T00:00:00.000Z` or without millis) as UTC datetimes."""
    schema = frame.collect_schema()
    return frame.with_columns(
        pl.col(name)
        .str.replace(CUR_TIMESTAMP_SUFFIX, "")
        .str.to_datetime("%Y-%m-%dT%H:%M:%S", time_unit="us", strict=True)
        for name in TIMESTAMP_COLUMNS
        if name in schema and schema[name] == pl.String
    )


def _tag_list(columns: dict[str, str]) -> pl.Expr:
    """Tag columns ({key: column}) as one key/value list; absent values are dropped downstream."""
    if not columns:
        return pl.lit([], dtype=TAGS)
    return pl.concat_list(
        pl.struct(pl.lit(key).alias("key"), pl.col(column).cast(pl.String).alias("value"))
        for key, column in columns.items()
    ).list.eval(pl.element().filter(pl.element().struct.field("value").is_not_null()))


def _origin(file: Path) -> tuple[pl.Expr, pl.Expr]:
    """Where each row comes from: its file (`_source_file`) and its row in it (`_row`, 0-based,
    the CSV header not counted), for the messages that name a bad value."""
    return pl.lit(str(file)).alias("_source_file"), pl.int_range(pl.len(), dtype=pl.Int64).alias("_row")


def _check_required(names: Iterable[str] | Mapping[str, str], file: Path) -> None:
    """Raises a SourceError naming `file` when it lacks a required column; `names` are the
    file's columns, or {its column as CUR 2.0 names it: as the file writes it}."""
    missing = [c for c in REQUIRED_COLUMNS if c not in names]
    if missing:
        raise missing_columns_error(file, "legacy CUR", missing, names)


def _csv_as_cur2(file: Path) -> tuple[pl.LazyFrame, list[str], list[str]]:
    try:
        frame = pl.scan_csv(file, infer_schema=False)
        headers = frame.collect_schema().names()
    except (pl.exceptions.PolarsError, OSError) as error:
        raise SourceError(f"cannot read legacy CUR file {file}: {error}") from None
    renamed: dict[str, str] = {}
    tags: dict[str, str] = {}
    by_parquet_name: dict[str, list[str]] = defaultdict(list)
    for header in headers:
        if header.startswith(DROPPED_CSV_CATEGORIES):
            continue
        by_parquet_name[parquet_column_name(header)].append(header)
        if header.startswith(CSV_TAG_CATEGORY):
            tags[header[len(CSV_TAG_CATEGORY) :]] = header
        else:
            renamed[header] = parquet_column_name(header)
    warnings = []
    for name, originals in by_parquet_name.items():
        if len(originals) < 2:
            continue
        if not all(o.startswith(CSV_TAG_CATEGORY) for o in originals):
            raise SourceError(f"{file}: columns {', '.join(originals)} all become {name}; cannot tell them apart")
        warnings.append(
            f"tag keys {', '.join(o[len(CSV_TAG_CATEGORY) :] for o in originals)} collide after snake-casing "
            f"({name[len(PARQUET_TAG_PREFIX) :]}); each is kept as written in Tags, none merged"
        )
    _check_required({name: header for header, name in renamed.items()}, file)
    converted = frame.select(
        *[pl.col(header).alias(name) for header, name in renamed.items()],
        _tag_list(tags).alias("resource_tags"),
        *_origin(file),
    )
    return _timestamps(converted), warnings, headers


def _parquet_as_cur2(file: Path) -> tuple[pl.LazyFrame, list[str]]:
    try:
        frame = pl.scan_parquet(file)
        names = frame.collect_schema().names()
    except (pl.exceptions.PolarsError, OSError) as error:
        raise SourceError(f"cannot read legacy CUR file {file}: {error}") from None
    _check_required(names, file)
    tags = {name[len(PARQUET_TAG_PREFIX) :]: name for name in names if name.startswith(PARQUET_TAG_PREFIX)}
    converted = frame.select(
        *[pl.col(name) for name in names if not name.startswith(PARQUET_TAG_PREFIX)],
        _tag_list(tags).alias("resource_tags"),
        *_origin(file),
    )
    return _timestamps(converted), names


def scan_legacy(files: Sequence[Path], export_format: str) -> LegacyScan:
    """A legacy CUR delivery's files (`legacy_csv` or `legacy_parquet`) as one lazy CUR 2.0 frame.

    Raises:
        SourceError: naming the file that cannot be read or lacks required columns.
    """
    frames: list[pl.LazyFrame] = []
    warnings: list[str] = []
    columns: dict[str, None] = {}
    for file in files:
        if export_format == "legacy_csv":
            frame, file_warnings, file_columns = _csv_as_cur2(file)
            warnings.extend(file_warnings)
        else:
            frame, file_columns = _parquet_as_cur2(file)
        frames.append(frame)
        columns.update(dict.fromkeys(file_columns))
    if not frames:
        raise SourceError("the delivery lists no report files")
    return LegacyScan(pl.concat(frames, how="diagonal_relaxed"), tuple(dict.fromkeys(warnings)), tuple(columns))


def write_as_cur2(frame: pl.LazyFrame, target: Path) -> None:
    """Writes a legacy delivery converted by `scan_legacy` as one CUR 2.0 Parquet file, rows in
    delivery order, its numbers as AWS wrote them (the mapping's `money` converts them) and its tags
    in `resource_tag_entries` (a map in CUR 2.0, key/value entries here).

    Raises:
        polars.exceptions.PolarsError: a timestamp that is not one.
    """
    frame.rename({"resource_tags": "resource_tag_entries"}).sink_parquet(target)
