"""Random bytes and well-formed-but-wrong documents to each parser and loader: either success or
one of our own errors (ConfigError, BudgetError, SourceError), never a raw exception."""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable
from datetime import date
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from connectors.aws.exports import _json_object
from connectors.errors import SourceError
from pipelines.attribution.registry import load_registry
from pipelines.config import load_config
from pipelines.config_rules import ConfigError
from pipelines.plans.files import BudgetError, load_budget
from tests.support import FIXTURES
from tests.support.lake import memory_warehouse

FUZZ = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SCALARS = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20)
DOCUMENTS = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4),
    max_leaves=12,
)
CONFIG_KEYS = ["warehouse", "reports_dir", "sources", "attribution", "budgets", "cost_categories", "orchestration"]
RUN_KEYS = ["id", "experiment", "owner", "start", "end", "resources", "weight"]


@pytest.fixture(scope="module")
def fuzz_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One folder for every example's files, under pytest's own temporary folders (which pytest
    prunes) rather than thousands of folders left in the system's temporary folder."""
    return tmp_path_factory.mktemp("fuzz")


def written(root: Path, content: bytes, name: str) -> Path:
    folder = Path(tempfile.mkdtemp(prefix="example-", dir=root))
    path = folder / name
    path.write_bytes(content)
    return path


def yaml_bytes(document: object) -> bytes:
    return yaml.safe_dump(document, allow_unicode=True).encode()


@FUZZ
@given(
    st.binary(max_size=200)
    | DOCUMENTS.map(yaml_bytes)
    | st.dictionaries(st.sampled_from(CONFIG_KEYS), DOCUMENTS).map(yaml_bytes)
)
def test_config_loader(fuzz_root: Path, content: bytes) -> None:
    try:
        load_config(written(fuzz_root, content, "runledger.yaml"))
    except ConfigError as error:
        assert "runledger.yaml" in str(error)


@FUZZ
@given(
    st.binary(max_size=200)
    | DOCUMENTS.map(yaml_bytes)
    | st.lists(st.dictionaries(st.sampled_from(RUN_KEYS), DOCUMENTS), max_size=3).map(
        lambda runs: yaml_bytes({"runs": runs})
    )
)
def test_registry_loader(fuzz_root: Path, content: bytes) -> None:
    try:
        load_registry(written(fuzz_root, content, "runs.yaml"))
    except ConfigError as error:
        assert "runs.yaml" in str(error)


@FUZZ
@given(st.binary(max_size=200) | DOCUMENTS.map(yaml_bytes))
def test_budget_loader(fuzz_root: Path, content: bytes) -> None:
    try:
        load_budget(written(fuzz_root, content, "budget.yaml"))
    except BudgetError as error:
        assert "budget.yaml" in str(error)


@FUZZ
@given(st.binary(max_size=200) | DOCUMENTS.map(lambda d: json.dumps(d).encode()))
def test_manifest_parser(content: bytes) -> None:
    try:
        assert isinstance(_json_object(content, "m.json"), dict)
    except SourceError as error:
        assert "m.json" in str(error)


SAMPLE_LINES = (FIXTURES / "focus_1.0_sample_1000.csv").read_text().splitlines()[:4]


@FUZZ
@given(
    st.binary(max_size=300)
    | st.lists(st.sampled_from(["NaN", "inf", "", "1e400", "x", "2024-13-01 00:00:00", "NULL", '"'])).map(
        lambda values: "\n".join([SAMPLE_LINES[0], *[",".join([v] * 60) for v in values]]).encode()
    )
)
def test_focus_file_reader(fuzz_root: Path, content: bytes) -> None:
    from datetime import datetime

    from pipelines.sources.focus.reader import FocusFilesReader

    file = written(fuzz_root, content, "focus.csv")
    try:
        # any period: the rows are fuzz
        FocusFilesReader("fuzz", [file], file.parent / "staging").batch(date(2024, 9, 1), [], datetime(2026, 11, 30))
    except SourceError as error:
        assert str(file) in str(error)


# GCP billing export rows as the export writes them, with fields replaced by wrong-but-well-formed
# values: a reader either loads them or fails with our error naming the file or table, and a
# failed load leaves the warehouse as it was.
GCP_ROW = {
    "billing_account_id": "01A2B3-C4D5E6-F7A8B9",
    "service": {"id": "6F81-5844-456A", "description": "Compute Engine"},
    "sku": {"id": "9A2B-73C1-4E5D", "description": "Nvidia H100 80GB GPU running in Americas"},
    "usage_start_time": "2026-10-30 10:00:00 UTC",
    "usage_end_time": "2026-10-30 10:59:59 UTC",
    "project": {"id": "ml-train-prod", "labels": [{"key": "team", "value": "ml-platform"}]},
    "labels": [{"key": "training-run", "value": "llm-3b-pt-gcp"}],
    "export_time": "2026-10-30 14:12:09.482113 UTC",
    "cost": 78.372,
    "currency": "USD",
    "usage": {"amount": 28800.0, "unit": "seconds", "amount_in_pricing_units": 8.0, "pricing_unit": "hour"},
    "credits": [{"name": "CUD", "amount": -28.99764, "type": "COMMITTED_USAGE_DISCOUNT"}],
    "invoice": {"month": "202610"},
    "cost_type": "regular",
}
WRONG_GCP_VALUES = {
    "cost": st.sampled_from([None, 1e300, -0.0, 1e-12, 123456789012.123456])
    | st.floats(allow_nan=False, allow_infinity=False),
    "currency": st.sampled_from([None, "", "JPY", "usd"]),
    "invoice": st.sampled_from(
        [None, {}, {"month": None}, {"month": "202613"}, {"month": "2026-10"}, {"month": "202611"}]
    ),
    "export_time": st.sampled_from([None, "2026-10-30 14:12:09 UTC", "1970-01-01 00:00:00 UTC"]),
    "usage_start_time": st.sampled_from([None, "2026-09-30 23:00:00 UTC", "2027-01-01 00:00:00 UTC"]),
    "credits": st.sampled_from([None, [], [{"name": "x", "amount": None}], [{"amount": -1e300}]]),
    "labels": st.lists(st.fixed_dictionaries({"key": st.text(max_size=8), "value": st.text(max_size=8)}), max_size=3),
}
GCP_ROWS = st.lists(
    st.fixed_dictionaries({}, optional=WRONG_GCP_VALUES).map(lambda wrong: {**GCP_ROW, **wrong}), min_size=1, max_size=4
)


def load_every_period(reader_of: Callable[[object], object], conn: object) -> None:
    """What the nightly job does with a source's reader (made by `reader_of` on the warehouse
    connection): each billing period's batch replaces the period; a period that fails leaves its
    rows as they were (the periods loaded before it stay loaded)."""
    from datetime import datetime

    from pipelines.ingest.load import replace_period

    reader = reader_of(conn)
    for period in reader.billing_periods():
        before = period_rows(conn, period)
        try:
            replace_period(conn, reader.batch(period, [], datetime(2026, 11, 30)))
        except Exception:
            assert period_rows(conn, period) == before
            raise


def period_rows(conn: object, period: object) -> tuple:
    """Rows and a hash of the rows of one billing period in `focus_line_items`."""
    return conn.execute(
        "select count(*), sum(hash(columns(*))) from focus_line_items "
        "where date_trunc('month', BillingPeriodStart) = ?",
        [period],
    ).fetchone()


@FUZZ
@given(st.binary(max_size=300) | GCP_ROWS.map(lambda rows: "\n".join(json.dumps(r) for r in rows).encode()))
def test_gcp_export_file_reader(fuzz_root: Path, content: bytes) -> None:
    from pipelines.ingest.load import LoadError
    from pipelines.sources.gcp_billing.reader import GcpExportFilesReader
    from pipelines.warehouse.conservation import ConservationError

    file = written(fuzz_root, content, "gcp-export.jsonl")
    warehouse, staging = memory_warehouse(), file.parent / "staging"
    good = file.with_name("loaded-before.jsonl")
    good.write_text(json.dumps(GCP_ROW))
    load_every_period(lambda conn: GcpExportFilesReader("fuzz", [good], staging), warehouse)
    try:
        load_every_period(lambda conn: GcpExportFilesReader("fuzz", [file], staging), warehouse)
    except (SourceError, LoadError, ConservationError) as error:
        assert str(file) in str(error) or "source fuzz" in str(error), str(error)


@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)
@given(rows=GCP_ROWS)
@example(rows=[{**GCP_ROW, "export_time": None, "invoice": {"month": "202611"}}])  # found by this test
@example(rows=[{**GCP_ROW, "invoice": {"month": "202613"}}])  # found by this test
def test_bigquery_export_reader(bigquery_emulator: str, fuzz_root: Path, rows: list[dict]) -> None:
    # After a good first load, a batch of wrong rows arrives in the table: the incremental read
    # loads it or refuses it naming the table (or the source and period).
    from pipelines.config import load_config
    from pipelines.ingest.load import LoadError
    from pipelines.ingest.readers import reader_for
    from pipelines.warehouse.conservation import ConservationError
    from tests.integration.test_gcp_bigquery import bigquery_config, new_table
    from tests.support.bigquery_emulator import DETAILED_EXPORT_SCHEMA, append_rows

    folder = Path(tempfile.mkdtemp(prefix="example-bq-", dir=fuzz_root))
    table = new_table(bigquery_emulator, DETAILED_EXPORT_SCHEMA)
    config = load_config(bigquery_config(folder, table, bigquery_emulator).resolve())
    warehouse = memory_warehouse()
    append_rows(bigquery_emulator, table, DETAILED_EXPORT_SCHEMA, [GCP_ROW])
    load_every_period(lambda conn: reader_for(config.sources[0], config, warehouse=conn), warehouse)
    append_rows(bigquery_emulator, table, DETAILED_EXPORT_SCHEMA, rows)
    try:
        load_every_period(lambda conn: reader_for(config.sources[0], config, warehouse=conn), warehouse)
    except (SourceError, LoadError, ConservationError) as error:
        assert table in str(error) or "source gcp-bq" in str(error), str(error)
