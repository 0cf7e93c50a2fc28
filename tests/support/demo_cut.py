"""The demo's exports as they stood on an earlier day: a minimal cut of the GCP billing export
(one file per export day) that a later night undoes, delivering the rest of the bill."""

from __future__ import annotations

import re
import shutil
from datetime import date
from pathlib import Path

from pipelines.demo.project import GCP_EXPORT_FOLDER

EXPORT_DAY = re.compile(r"_(\d{8})\.jsonl$")


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
