"""Shared fixtures, the hypothesis profile, and the tier markers taken from each test's folder."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import settings

from tests.support import FIXTURES

# CI replays the same examples every run (a failure there is reproducible, never a flake);
# locally every run draws new ones.
settings.register_profile("ci", derandomize=True)
if os.environ.get("CI"):
    settings.load_profile("ci")

# session-wide servers: `bigquery_emulator`, `moto_endpoint`, `postgres_server`, `prometheus_servers`;
# the demo after its night, built once per session: `shared_demo`
pytest_plugins = [
    "tests.support.bigquery_emulator",
    "tests.support.moto_server",
    "tests.support.postgres",
    "tests.support.prometheus",
    "tests.support.demo_lake",
]
TIERS = ("unit", "integration", "e2e")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Marks each test with its tier, the folder it lives in (tests/unit, tests/integration, tests/e2e)."""
    for item in items:
        tier = Path(item.path).parent.name
        if tier not in TIERS:
            raise pytest.UsageError(f"{item.path}: a test lives in one of tests/{{{','.join(TIERS)}}}/")
        item.add_marker(getattr(pytest.mark, tier))


@pytest.fixture(autouse=True)
def _no_ambient_config(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RUNLEDGER_CONFIG", raising=False)
    monkeypatch.delenv("DAGSTER_HOME", raising=False)


@pytest.fixture
def focus_sample() -> Path:
    return FIXTURES / "focus_1.0_sample_1000.csv"
