"""The six analyst questions, asked through `runledger query` as a user asks them (a new process
each time, read-only), and the comparable question answered by plain DuckDB over the raw export."""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

from bench.sqlfiles import read_bench_sql

# Name → what it asks; the SQL is bench/sql/questions/<name>.sql.
QUESTIONS = {
    "run_category_spend": "spend by run × category",
    "run_daily_spend": "daily spend of one run",
    "top_unattributed": "top unattributed",
    "run_gpu_hours": "GPU-hours per run",
    "dataset_version_cost": "cost per dataset version",
    "service_daily_spend": "service × day (focus_line_items)",
}
REPEATS = 3
RUNLEDGER = Path(sys.executable).parent / "runledger"


class QuestionFailed(RuntimeError):
    """A question's process exited non-zero; the message carries its error output."""


def _timed(command: list[str], timeout_seconds: float) -> tuple[float, str]:
    started = time.perf_counter()
    completed = subprocess.run(command, capture_output=True, text=True, timeout=timeout_seconds, check=False)
    seconds = time.perf_counter() - started
    if completed.returncode != 0:
        raise QuestionFailed(
            f"{' '.join(command[:3])} … failed (exit {completed.returncode}):\n{completed.stderr[-2000:]}"
        )
    return seconds, completed.stdout


def _median_of_repeats(command: list[str], timeout_seconds: float) -> tuple[list[float], str]:
    runs = [_timed(command, timeout_seconds) for _ in range(REPEATS)]
    return [round(seconds, 3) for seconds, _ in runs], runs[-1][1]


def ask_questions(config_path: Path, timeout_seconds: float) -> dict:
    """Each question REPEATS times through `runledger query --format csv`: the wall seconds of
    each, their median and the rows answered."""
    answers = {}
    for name, meaning in QUESTIONS.items():
        seconds, output = _median_of_repeats(
            # `--`: the statement starts with a comment, which click would take for an option
            [
                str(RUNLEDGER),
                "query",
                "--config",
                str(config_path),
                "--format",
                "csv",
                "--",
                read_bench_sql(f"questions/{name}"),
            ],
            timeout_seconds,
        )
        answers[name] = {
            "question": meaning,
            "seconds": seconds,
            "median_seconds": statistics.median(seconds),
            "rows": max(len(output.splitlines()) - 1, 0),
        }
    return answers


def ask_plain_duckdb(files: tuple[Path, ...], timeout_seconds: float) -> dict:
    """Spend by service and day from the raw export's Parquet files, by plain DuckDB in a new
    process each time: the wall seconds of each, their median and the rows answered."""
    seconds, output = _median_of_repeats(
        [sys.executable, "-m", "bench", "plain-question", *map(str, files)], timeout_seconds
    )
    return {
        "question": "service × day (raw export, plain DuckDB)",
        "seconds": seconds,
        "median_seconds": statistics.median(seconds),
        "rows": json.loads(output.strip().splitlines()[-1])["rows"],
    }
