"""Empty export files and the same spend delivered twice, in every kind of source (GCP export
files, FOCUS files, CUR 2.0, legacy CUR and the Athena layout in a folder and in S3 through a
moto server): the run exits 1 naming the file (or both files) before anything is replaced, and
each period's line items and allocations keep their totals."""

from __future__ import annotations

import gzip
import shutil
import uuid
from collections.abc import Callable
from datetime import date
from decimal import Decimal
from pathlib import Path

import boto3
import polars as pl
import pytest
from click.testing import CliRunner

from pipelines.cli import main
from tests.support import FIXTURES, write_config
from tests.support.cur_exports import (
    BucketSink,
    FolderSink,
    Sink,
    cur2_table,
    lines,
    parquet_bytes,
    write_athena_delivery,
    write_athena_status,
    write_cur2_delivery,
    write_legacy_delivery,
)
from tests.support.demo_lake import SharedDemo
from tests.support.lake import lake_of, reading
from tests.support.warehouse_state import table_checksums

# dummy AWS credentials (tests/support/moto_server.py) for every test
pytestmark = pytest.mark.usefixtures("aws_credentials")

OCTOBER = date(2026, 10, 1)
GCP_FILE = "gcp_billing_export_resource_v1_01A2B3_C4D5E6_F7A8B9_{day}.jsonl"


def invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.output


def spend(config: Path) -> dict[tuple[str, str, str], tuple[int, Decimal, Decimal]]:
    """(table, source, period) → rows, Σ billed and Σ effective cost of focus_line_items and
    cost_allocations."""
    with reading(lake_of(config.parent)) as conn:
        rows = conn.execute(
            "select 'focus_line_items', x_SourceName, strftime(BillingPeriodStart, '%Y-%m'), count(*), "
            "sum(BilledCost), sum(EffectiveCost) from focus_line_items group by all "
            "union all select 'cost_allocations', x_SourceName, strftime(BillingPeriodStart, '%Y-%m'), "
            "count(distinct x_LineItemKey), sum(billed_cost), sum(effective_cost) from cost_allocations group by all"
        ).fetchall()
    return {(table, source, period): (n, billed, effective) for table, source, period, n, billed, effective in rows}


def loaded(config: Path) -> dict[tuple[str, str, str], tuple[int, Decimal, Decimal]]:
    """Runs the nightly job, which succeeds; returns the spend it left."""
    code, output = invoke("run", "--config", str(config))
    assert code == 0, output
    return spend(config)


def refused(config: Path, good: dict) -> str:
    """Runs the nightly job on a faulty delivery: it exits 1 and leaves every table and the spend
    of every period as the good load left them; returns the error line."""
    before = table_checksums(lake_of(config.parent))
    code, output = invoke("run", "--config", str(config))
    assert code == 1, output
    assert spend(config) == good
    assert table_checksums(lake_of(config.parent)) == before
    (error,) = [line for line in output.splitlines() if line.startswith("run failed:")]
    return error


# ---- GCP export files ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def gcp_loaded(shared_demo: SharedDemo, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two weeks of the demo's GCP export files (October and November 2026), loaded once."""
    demo = shared_demo.root
    root = tmp_path_factory.mktemp("gcp")
    (root / "exports").mkdir()
    for day in [*range(20261025, 20261032), *range(20261101, 20261108)]:
        shutil.copy(demo / ".runledger" / "demo" / "gcp" / GCP_FILE.format(day=day), root / "exports")
    write_config(root, "sources:\n  - {name: gcp-files, kind: gcp_billing, path: exports}\n")
    loaded(root / "runledger.yaml")
    return root


@pytest.fixture
def gcp_site(gcp_loaded: Path, tmp_path: Path) -> tuple[Path, dict]:
    """A private copy of the loaded GCP project: its `runledger.yaml` and its spend."""
    shutil.copytree(gcp_loaded, tmp_path / "site")
    config = tmp_path / "site" / "runledger.yaml"
    good = spend(config)
    assert {period for _, _, period in good} == {"2026-10", "2026-11"}
    assert good[("focus_line_items", "gcp-files", "2026-10")] == good[("cost_allocations", "gcp-files", "2026-10")]
    return config, good


def empty_parquet_like(export: Path) -> bytes:
    """A Parquet file with the export's fields and no rows."""
    target = export.with_suffix(".schema.parquet")
    pl.read_ndjson(export).head(0).write_parquet(target)
    data = target.read_bytes()
    target.unlink()
    return data


@pytest.mark.parametrize(
    ("name", "content", "why"),
    [
        (GCP_FILE.format(day=20261108), b"", "0 bytes"),
        (GCP_FILE.format(day=20261108), b"\n\r\n  \n", "no rows"),
        (GCP_FILE.format(day=20261108) + ".gz", gzip.compress(b"", mtime=0), "no rows"),
        ("gcp_billing_export_resource_v1_01A2B3_C4D5E6_F7A8B9_20261108.parquet", None, "a schema and no rows"),
    ],
    ids=["zero-bytes", "blank-lines", "empty-gz", "parquet-without-rows"],
)
def test_an_empty_gcp_export_file_stops_the_run_naming_it_and_keeps_every_period(
    gcp_site: tuple[Path, dict], name: str, content: bytes | None, why: str
) -> None:
    config, good = gcp_site
    empty = config.parent / "exports" / name
    empty.write_bytes(content if content is not None else empty_parquet_like(next(empty.parent.glob("*.jsonl"))))
    error = refused(config, good)
    assert error.startswith(f"run failed: {empty}: the file holds no line items ({why}); nothing was loaded")
    empty.unlink()
    assert loaded(config) == good


def test_a_copy_of_a_gcp_export_file_stops_the_run_naming_both(gcp_site: tuple[Path, dict]) -> None:
    config, good = gcp_site
    original = config.parent / "exports" / GCP_FILE.format(day=20261028)
    copy = original.with_name(f"{original.stem} (1).jsonl")
    shutil.copy(original, copy)
    error = refused(config, good)
    assert error.startswith(f"run failed: {copy} and {original} have the same content: the same spend delivered twice")


def test_a_gzipped_copy_of_a_gcp_export_file_is_the_same_content(gcp_site: tuple[Path, dict]) -> None:
    config, good = gcp_site
    original = config.parent / "exports" / GCP_FILE.format(day=20261103)
    copy = config.parent / "exports" / "again" / f"{original.name}.gz"
    copy.parent.mkdir()
    copy.write_bytes(gzip.compress(original.read_bytes()))
    error = refused(config, good)
    assert str(copy) in error and str(original) in error and "have the same content" in error


def test_a_gcp_field_whose_type_cannot_be_told_warns_and_loads(gcp_site: tuple[Path, dict]) -> None:
    # the loader reads only the fields it maps; the drift check, which lists every field, warns
    config, good = gcp_site
    export = config.parent / "exports" / GCP_FILE.format(day=20261101)
    rows = export.read_text().splitlines()
    rows[0] = rows[0][:-1] + ', "x_note": {"a": 1}}'
    rows[1] = rows[1][:-1] + ', "x_note": [1]}'
    export.write_text("\n".join(rows) + "\n")
    code, output = invoke("run", "--config", str(config))
    assert code == 0, output
    drift = "the delivered columns could not be compared: cannot tell the fields of GCP billing export file"
    assert f"{drift} {export}" in output
    assert spend(config) == good


# ---- FOCUS files ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def focus_loaded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The FOCUS sample as one export file of a folder, loaded once."""
    root = tmp_path_factory.mktemp("focus")
    (root / "exports").mkdir()
    shutil.copy(FIXTURES / "focus_1.0_sample_1000.csv", root / "exports" / "focus.csv")
    write_config(root, "sources:\n  - {name: focus-files, kind: focus, path: exports}\n")
    loaded(root / "runledger.yaml")
    return root


@pytest.fixture
def focus_site(focus_loaded: Path, tmp_path: Path) -> tuple[Path, dict]:
    shutil.copytree(focus_loaded, tmp_path / "site")
    config = tmp_path / "site" / "runledger.yaml"
    return config, spend(config)


def header_of(export: Path) -> bytes:
    return export.read_bytes().splitlines(keepends=True)[0]


@pytest.mark.parametrize(
    ("name", "why"),
    [("focus-2.csv", "0 bytes"), ("focus-2.csv", "a header and no rows"), ("focus-2.csv.gz", "a header and no rows")],
)
def test_an_empty_focus_file_beside_the_export_stops_the_run_naming_it(
    focus_site: tuple[Path, dict], name: str, why: str
) -> None:
    config, good = focus_site
    export = config.parent / "exports" / "focus.csv"
    empty = export.with_name(name)
    content = b"" if why == "0 bytes" else header_of(export)
    empty.write_bytes(gzip.compress(content) if name.endswith(".gz") else content)
    error = refused(config, good)
    assert error.startswith(f"run failed: {empty}: the file holds no line items ({why}); nothing was loaded")


def test_a_focus_export_with_no_rows_stops_the_run_naming_it(focus_site: tuple[Path, dict]) -> None:
    config, good = focus_site
    export = config.parent / "exports" / "focus.csv"
    export.write_bytes(header_of(export))
    error = refused(config, good)
    assert error.startswith(f"run failed: {export}: the file holds no line items (a header and no rows)")


def test_a_copy_of_a_focus_file_stops_the_run_naming_both(focus_site: tuple[Path, dict]) -> None:
    config, good = focus_site
    export = config.parent / "exports" / "focus.csv"
    copy = config.parent / "exports" / "2024" / "focus.csv"
    copy.parent.mkdir()
    shutil.copy(export, copy)
    error = refused(config, good)
    assert error.startswith(f"run failed: {copy} and {export} have the same content: the same spend delivered twice")


# ---- AWS exports, in a folder and in S3 ----------------------------------------------------


@pytest.fixture(params=["folder", "s3"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[Sink, str, str]:
    """Where the export lives: the sink that writes it, the `uri` of its root (the export is
    `exports/<layout>` below it) and the source's extra config lines; and how a file is named."""
    if request.param == "folder":
        return FolderSink(tmp_path / "bucket"), "bucket", ""
    endpoint = request.getfixturevalue("moto_endpoint")
    client = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1")
    name = f"billing-{uuid.uuid4().hex[:12]}"
    client.create_bucket(Bucket=name)
    return BucketSink(client, name), f"s3://{name}", f"\n    endpoint_url: {endpoint}"


def aws_config(tmp_path: Path, store: tuple[Sink, str, str], export: str) -> Path:
    _, root, extra = store
    uri = f"{root}/{export}" if root.startswith("s3://") else f"{tmp_path / root / export}"
    return write_config(tmp_path, f"sources:\n  - name: aws\n    kind: aws_cur\n    uri: {uri}{extra}\n")


FIRST = [lines(OCTOBER, "a", ["1", "2"]), lines(OCTOBER, "b", ["3", "34"])]
SECOND = [lines(OCTOBER, "c", ["5", "6"]), lines(OCTOBER, "d", ["7"])]
KEPT = "nothing was loaded, the rows loaded before are kept"
EXPORTS = {"cur2": "exports/c2", "legacy": "exports/legacy", "athena": "exports/cur-pq"}


def first_delivery(sink: Sink, layout: str) -> None:
    """October of the layout: two files, 4 lines, 40.00."""
    if layout == "cur2":
        write_cur2_delivery(sink, "exports", "c2", OCTOBER, "exec-1", FIRST)
    elif layout == "legacy":
        write_legacy_delivery(sink, "exports", "legacy", OCTOBER, "assembly-1", FIRST)
    else:
        write_athena_delivery(sink, "exports", "cur-pq", OCTOBER, FIRST)
        write_athena_status(sink, "exports", "cur-pq", "READY")


def cur2_key(execution: str, number: int) -> str:
    return f"exports/c2/data/BILLING_PERIOD=2026-10/20261102T000000Z-{execution}/c2-{number:05d}.snappy.parquet"


def cur2_manifest_lists_a_file_twice(sink: Sink, name: Callable[[str], str]) -> str:
    write_cur2_delivery(
        sink, "exports", "c2", OCTOBER, "exec-2", SECOND[:1], manifest_extra_files=(cur2_key("exec-2", 1),)
    )
    manifest = name("exports/c2/metadata/BILLING_PERIOD=2026-10/c2-Manifest.json")
    return f"{manifest} lists {name(cur2_key('exec-2', 1))} twice: its spend would count twice; {KEPT}"


def cur2_files_with_the_same_bytes(sink: Sink, name: Callable[[str], str]) -> str:
    write_cur2_delivery(sink, "exports", "c2", OCTOBER, "exec-2", [SECOND[0], SECOND[0]])
    return f"{name(cur2_key('exec-2', 1))} and {name(cur2_key('exec-2', 2))} have the same content: the same spend"


def cur2_zero_byte_file(sink: Sink, name: Callable[[str], str]) -> str:
    write_cur2_delivery(sink, "exports", "c2", OCTOBER, "exec-2", SECOND)
    sink.put(cur2_key("exec-2", 2), b"")
    return f"{name(cur2_key('exec-2', 2))}: the file holds no line items (0 bytes); {KEPT}"


def legacy_files_with_the_same_bytes(sink: Sink, name: Callable[[str], str]) -> str:
    keys = write_legacy_delivery(sink, "exports", "legacy", OCTOBER, "assembly-2", [SECOND[0], SECOND[0]])
    return f"{name(keys[0])} and {name(keys[1])} have the same content: the same spend delivered twice; {KEPT}"


def legacy_file_with_a_header_only(sink: Sink, name: Callable[[str], str]) -> str:
    keys = write_legacy_delivery(sink, "exports", "legacy", OCTOBER, "assembly-2", [SECOND[0], []])
    return f"{name(keys[1])}: the file holds no line items (a header and no rows); {KEPT}"


def athena_copy_beside_the_original(sink: Sink, name: Callable[[str], str]) -> str:
    original = "exports/cur-pq/cur-pq/year=2026/month=10/cur-pq-00002.snappy.parquet"
    copy = original.replace("00002", "00003")
    sink.put(copy, parquet_bytes(cur2_table(FIRST[1], athena=True)))
    return f"{name(original)} and {name(copy)} have the same content: the same spend delivered twice; {KEPT}"


@pytest.mark.parametrize(
    ("layout", "deliver"),
    [
        ("cur2", cur2_manifest_lists_a_file_twice),
        ("cur2", cur2_files_with_the_same_bytes),
        ("cur2", cur2_zero_byte_file),
        ("legacy", legacy_files_with_the_same_bytes),
        ("legacy", legacy_file_with_a_header_only),
        ("athena", athena_copy_beside_the_original),
    ],
)
def test_an_aws_delivery_with_a_file_twice_or_empty_keeps_the_period(
    tmp_path: Path, store: tuple[Sink, str, str], layout: str, deliver: Callable[[Sink, Callable[[str], str]], str]
) -> None:
    sink, root, _ = store
    first_delivery(sink, layout)
    config = aws_config(tmp_path, store, EXPORTS[layout])
    good = loaded(config)
    assert good[("focus_line_items", "aws", "2026-10")][:2] == (4, Decimal(40))
    assert good[("cost_allocations", "aws", "2026-10")][:2] == (4, Decimal(40))
    expected = deliver(sink, lambda key: f"{root}/{key}" if root.startswith("s3://") else str(tmp_path / root / key))
    error = refused(config, good)
    assert error.startswith(f"run failed: {expected}"), error
    with reading(lake_of(tmp_path)) as conn:
        (status,) = conn.execute("select status from loads order by started_at desc limit 1").fetchone()
    assert status == "failed"


def test_a_copy_beside_a_cur2_delivery_that_its_manifest_does_not_list_is_not_read(
    tmp_path: Path, store: tuple[Sink, str, str]
) -> None:
    sink = store[0]
    first_delivery(sink, "cur2")
    config = aws_config(tmp_path, store, EXPORTS["cur2"])
    good = loaded(config)
    copy_key = cur2_key("exec-1", 1).replace("00001", "00001 (copy)")
    sink.put(copy_key, parquet_bytes(cur2_table(FIRST[0])))
    assert loaded(config) == good
