"""The demo project cut mid-run: its exports and event logs as they stood at a moment, e.g. the
morning of 2026-10-06 while llm-7b-pt-r1 is still training, for tests of the nightly view."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from pipelines.demo import write_demo
from pipelines.nightly import run_nightly

# Mid-run for llm-7b-pt-r1 (training 2026-10-03 00:00 → 2026-10-10 12:00), before llm-13b-ft-r2
# starts (2026-10-24) and while llm-3b-pt-gcp trains.
MID_RUN_CUT = datetime(2026, 10, 6)


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
