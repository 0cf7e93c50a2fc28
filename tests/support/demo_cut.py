"""The demo project cut at an earlier moment, for tests of the nightly view.

`write_cut_demo` writes the whole project as it stood at a moment (its exports and event logs),
e.g. the morning of 2026-10-06 while llm-7b-pt-r1 is still training. `cut_gcp_export` and
`restore_gcp_export` hold back the GCP export's later days of a written demo and deliver them on
a later night, the bill arriving after the events.
"""

from __future__ import annotations

import re
import shutil
from datetime import date, datetime
from pathlib import Path

from pipelines.demo import write_demo
from pipelines.demo.project import GCP_EXPORT_FOLDER
from pipelines.nightly import run_nightly

# Mid-run for llm-7b-pt-r1 (training 2026-10-03 00:00 → 2026-10-10 12:00), before llm-13b-ft-r2
# starts (2026-10-24) and while llm-3b-pt-gcp trains.
MID_RUN_CUT = datetime(2026, 10, 6)
EXPORT_DAY = re.compile(r"_(\d{8})\.jsonl$")


def write_cut_demo(root: Path, cut: datetime = MID_RUN_CUT) -> Path:
    """Writes the demo project under `root` as it stood at `cut` (UTC) and returns its config path.

    The AWS export holds each billing period's delivery up to `cut` (none for a period starting
    after it), the GCP export the rows exported by then, the event logs the events up to then.
    """
    return write_demo(root, data_end=cut)


def run_cut_demo(root: Path, cut: datetime = MID_RUN_CUT) -> Path:
    """Writes the cut demo under `root`, runs its nightly job and returns the config path."""
    config = write_cut_demo(root, cut)
    run_nightly(config, echo=lambda line: None)
    return config


def cut_gcp_export(project: Path, last_export_day: date, aside: Path) -> list[Path]:
    """Moves the demo's GCP export files exported after `last_export_day` into `aside`.

    Returns:
        The files moved, as they are in `aside`, for `restore_gcp_export`.
    """
    aside.mkdir(parents=True, exist_ok=True)
    moved = []
    for path in sorted((project / GCP_EXPORT_FOLDER).iterdir()):
        match = EXPORT_DAY.search(path.name)
        if match and date.fromisoformat(match[1]) > last_export_day:
            moved.append(Path(shutil.move(path, aside / path.name)))
    return moved


def restore_gcp_export(project: Path, moved: list[Path]) -> None:
    """Puts the files `cut_gcp_export` moved back: the bill's later days arrive."""
    for path in moved:
        shutil.move(path, project / GCP_EXPORT_FOLDER / path.name)
