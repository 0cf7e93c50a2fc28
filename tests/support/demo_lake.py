"""The demo project after its first night, built once per test session and shared by every module
that reads it, and copies of it for the modules that change it.

`runledger demo --dir` runs once per session: the first pytest-xdist worker to ask builds it in the
session's temporary folder (the parent of each worker's own), under a file lock the others wait
on; a run without xdist builds it in its own temporary folder. An embedded lake is a folder (a
SQLite catalog and Parquet files, the data path given at every attach), and every path in the
demo's config is relative to the config file, so a copy of the project folder is an independent
project with the same lake.

The shared project is read-only by convention: read its lake, reports and files in place; copy it
(`copy_demo`) before running anything that writes, or copy only its inputs (`copy_demo_inputs`)
for a project that has not run yet.
"""

from __future__ import annotations

import fcntl
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner

from pipelines.cli import main

CONFIG_FILE_NAME = "runledger.yaml"
BUILT = "built"  # the marker written once the build is complete
INPUTS_FOLDER = Path(".runledger") / "demo"
# the config's paths into INPUTS_FOLDER: five sources (the Slurm source's file and node map, the saved
# DCGM responses), the run registry, the budgets
INPUT_PATHS = 8


@dataclass(frozen=True)
class SharedDemo:
    """The shared demo project after its first night.

    Attributes:
        config: its `runledger.yaml`; the project is its folder.
        output: what `runledger demo --dir` printed while building it.
    """

    config: Path
    output: str

    @property
    def root(self) -> Path:
        return self.config.parent


def _build(folder: Path) -> None:
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv("RUNLEDGER_CONFIG", raising=False)
        patch.delenv("DAGSTER_HOME", raising=False)
        result = CliRunner().invoke(main, ["demo", "--dir", str(folder / "project")])
    assert result.exit_code == 0, result.output
    (folder / "output.txt").write_text(result.output)
    (folder / BUILT).touch()


@pytest.fixture(scope="session")
def shared_demo(tmp_path_factory: pytest.TempPathFactory) -> SharedDemo:
    """The demo project after `runledger demo`, built once per session: read it, never write to it."""
    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent  # the session's folder, shared by the workers
    folder = base / "shared-demo"
    with (base / "shared-demo.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (folder / BUILT).exists():
            shutil.rmtree(folder, ignore_errors=True)
            _build(folder)
    return SharedDemo(folder / "project" / CONFIG_FILE_NAME, (folder / "output.txt").read_text())


def copy_demo(demo: SharedDemo, target: Path, *, shared_inputs: bool = False) -> Path:
    """Copies the shared demo project after its night to `target` (files keep their times) and
    returns the copy's config path: an independent project with its own lake.

    The lake names the files it loaded by their absolute paths (`loads`, and `x_SourceFile` and
    the GCP rows' `x_LineItemKey`), so the copy's next night reloads every period (the same
    amounts, other keys) as a new delivery. With `shared_inputs` the copy's config reads the
    shared project's exports, registry, budgets and event logs instead (which it must not
    change): its next night is the second night of the demo.
    """
    shutil.copytree(demo.root, target, symlinks=True)
    config = target / CONFIG_FILE_NAME
    if shared_inputs:
        text = config.read_text()
        assert text.count(f" {INPUTS_FOLDER}/") == INPUT_PATHS, text
        config.write_text(text.replace(f" {INPUTS_FOLDER}/", f" {demo.root / INPUTS_FOLDER}/"))
    return config


def copy_demo_inputs(demo: SharedDemo, target: Path) -> Path:
    """Writes the demo project to `target` as `write_demo(target)` does (its config, exports, run
    registry, budgets and event logs, no lake yet), copied from the shared project; returns the
    config path."""
    target.mkdir(parents=True, exist_ok=True)
    shutil.copytree(demo.root / INPUTS_FOLDER, target / INPUTS_FOLDER, copy_function=shutil.copy)
    shutil.copy(demo.config, target / CONFIG_FILE_NAME)
    return target / CONFIG_FILE_NAME
