"""Random bytes and well-formed-but-wrong documents to each parser and loader: either success or
one of our own errors (ConfigError, BudgetError, SourceError), never a raw exception."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from connectors.aws_cur import _json_object
from connectors.errors import SourceError
from pipelines.attribution.registry import load_registry
from pipelines.budgets.model import BudgetError, load_budget
from pipelines.config import ConfigError, load_config
from pipelines.ingest import focus_files
from tests.conftest import FIXTURES

FUZZ = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SCALARS = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20)
DOCUMENTS = st.recursive(
    SCALARS, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4), max_leaves=12
)
CONFIG_KEYS = ["warehouse", "reports_dir", "sources", "attribution", "budgets", "cost_categories", "orchestration"]
RUN_KEYS = ["id", "experiment", "owner", "start", "end", "resources", "weight"]


def written(content: bytes, name: str) -> Path:
    folder = Path(tempfile.mkdtemp(prefix="fuzz-"))
    path = folder / name
    path.write_bytes(content)
    return path


def yaml_bytes(document: object) -> bytes:
    return yaml.safe_dump(document, allow_unicode=True).encode()


@FUZZ
@given(st.binary(max_size=200) | DOCUMENTS.map(yaml_bytes) | st.dictionaries(st.sampled_from(CONFIG_KEYS), DOCUMENTS).map(yaml_bytes))
def test_config_loader(content: bytes) -> None:
    try:
        load_config(written(content, "runledger.yaml"))
    except ConfigError as error:
        assert "runledger.yaml" in str(error)


@FUZZ
@given(
    st.binary(max_size=200)
    | DOCUMENTS.map(yaml_bytes)
    | st.lists(st.dictionaries(st.sampled_from(RUN_KEYS), DOCUMENTS), max_size=3).map(lambda runs: yaml_bytes({"runs": runs}))
)
def test_registry_loader(content: bytes) -> None:
    try:
        load_registry(written(content, "runs.yaml"))
    except ConfigError as error:
        assert "runs.yaml" in str(error)


@FUZZ
@given(st.binary(max_size=200) | DOCUMENTS.map(yaml_bytes))
def test_budget_loader(content: bytes) -> None:
    try:
        load_budget(written(content, "budget.yaml"))
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
def test_focus_file_reader(content: bytes) -> None:
    file = written(content, "focus.csv")
    try:
        frame = focus_files.scan_focus([file])
        focus_files.raw_control_totals(frame, None, [file])
    except SourceError as error:
        assert str(file) in str(error)
