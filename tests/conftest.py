"""Shared fixtures: the real FOCUS sample and small warehouse helpers."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import settings

# CI replays the same examples every run (a failure there is reproducible, never a flake);
# locally every run draws new ones.
settings.register_profile("ci", derandomize=True)
if os.environ.get("CI"):
    settings.load_profile("ci")

FIXTURES = Path(__file__).parent / "fixtures"
pytest_plugins = ["tests.bigquery_emulator"]  # the session-wide `bigquery_emulator` fixture


@pytest.fixture(autouse=True)
def _no_ambient_config(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RUNLEDGER_CONFIG", raising=False)
    monkeypatch.delenv("DAGSTER_HOME", raising=False)


@pytest.fixture
def focus_sample() -> Path:
    return FIXTURES / "focus_1.0_sample_1000.csv"


def write_config(folder: Path, text: str) -> Path:
    """Writes `runledger.yaml` into `folder` and returns its path."""
    path = folder / "runledger.yaml"
    path.write_text(text)
    return path
