"""The one rule every delivery's files pass before anything is read: no file listed twice, no
file without line items, no two files with the same content."""

from __future__ import annotations

import gzip
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from connectors.errors import SourceError
from pipelines.sources.base import refuse_unusable_files

ROW = b'{"cost": 1.5, "invoice": {"month": "202610"}}\n'


def check(*files: Path, listed_by: str | None = None) -> None:
    refuse_unusable_files(files, [str(file) for file in files], listed_by)


def write(path: Path, content: bytes) -> Path:
    path.write_bytes(content)
    return path


def test_files_with_rows_and_different_content_pass(tmp_path: Path) -> None:
    check(write(tmp_path / "a.jsonl", ROW), write(tmp_path / "b.jsonl", ROW.replace(b"1.5", b"2.5")))


@pytest.mark.parametrize(
    ("name", "content", "why"),
    [
        ("x.jsonl", b"", "0 bytes"),
        ("x.jsonl", b"\n \r\n", "no rows"),
        ("x.jsonl.gz", gzip.compress(b"\n", mtime=0), "no rows"),
        ("x.csv", b"\xef\xbb\xbfBilledCost,BillingCurrency\r\n\r\n", "a header and no rows"),
        ("x.csv.gz", gzip.compress(b"BilledCost\n", mtime=0), "a header and no rows"),
        ("x.parquet", b"", "0 bytes"),
    ],
)
def test_a_file_without_line_items_is_refused_naming_it(tmp_path: Path, name: str, content: bytes, why: str) -> None:
    full = write(tmp_path / "full.jsonl", ROW)
    empty = write(tmp_path / name, content)
    with pytest.raises(SourceError) as refused:
        check(full, empty)
    assert str(refused.value).startswith(f"{empty}: the file holds no line items ({why}); nothing was loaded")


def test_a_parquet_file_with_a_schema_and_no_rows_is_refused(tmp_path: Path) -> None:
    pq.write_table(pa.table({"cost": pa.array([], pa.float64())}), tmp_path / "x.parquet")
    with pytest.raises(SourceError, match=r"x\.parquet: the file holds no line items \(a schema and no rows\)"):
        check(tmp_path / "x.parquet")


def test_a_corrupt_file_is_left_to_its_reader(tmp_path: Path) -> None:
    # neither empty nor a duplicate: the format's reader names what is wrong with it
    check(write(tmp_path / "x.parquet", b"PAR1 garbage"), write(tmp_path / "y.jsonl.gz", b"\x1f\x8b garbage"))


def test_two_files_with_the_same_content_are_refused_naming_both(tmp_path: Path) -> None:
    first, copy = write(tmp_path / "a.jsonl", ROW), write(tmp_path / "a (1).jsonl.gz", gzip.compress(ROW))
    with pytest.raises(SourceError) as refused:
        check(first, write(tmp_path / "b.jsonl", ROW * 2), copy)
    assert str(refused.value).startswith(
        f"{first} and {copy} have the same content: the same spend delivered twice; nothing was loaded"
    )


def test_a_file_listed_twice_is_refused_naming_the_listing(tmp_path: Path) -> None:
    file = write(tmp_path / "a.jsonl", ROW)
    with pytest.raises(SourceError) as refused:
        check(file, file, listed_by="manifest m.json")
    assert str(refused.value).startswith(f"manifest m.json lists {file} twice: its spend would count twice")
