"""Wall time and peak memory of a child process tree.

Memory is the resident set size (RSS) of the child and all its descendants, summed, sampled
every SAMPLE_SECONDS from /proc (Linux). The sum counts pages shared between processes
(the multiprocess executor's forked workers) once per process, so it is an upper bound of what
the tree holds; a peak shorter than one sampling interval can be missed.
"""

from __future__ import annotations

import os
import subprocess
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

SAMPLE_SECONDS = 0.05


@dataclass
class MemorySample:
    at: float
    rss_bytes: int


@dataclass
class Measurement:
    """A finished child process: its exit code, wall seconds, memory samples and output."""

    returncode: int
    started_at: float
    wall_seconds: float
    samples: list[MemorySample] = field(default_factory=list)
    output: str = ""

    @property
    def peak_rss_bytes(self) -> int:
        return max((sample.rss_bytes for sample in self.samples), default=0)

    def peak_between(self, start: float, end: float) -> int:
        """The highest sample taken in [start, end] (epoch seconds), else the nearest before."""
        inside = [s.rss_bytes for s in self.samples if start <= s.at <= end]
        if inside:
            return max(inside)
        before = [s.rss_bytes for s in self.samples if s.at <= start]
        return before[-1] if before else 0


PAGE_BYTES = os.sysconf("SC_PAGE_SIZE")


def _parent_and_rss(pid: str) -> tuple[int, int] | None:
    """The parent pid and resident bytes of a process, from /proc/<pid>/stat; None once gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # the command name (field 2) may hold spaces and parentheses: split after its closing one
    fields = stat[stat.rindex(")") + 2 :].split()
    return int(fields[1]), int(fields[21]) * PAGE_BYTES


def _tree_rss(root_pid: int) -> int:
    """Σ RSS of `root_pid` and every process descending from it."""
    processes = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            found = _parent_and_rss(entry)
            if found:
                processes[int(entry)] = found
    children: dict[int, list[int]] = {}
    for pid, (parent, _) in processes.items():
        children.setdefault(parent, []).append(pid)
    total, pending = 0, [root_pid]
    while pending:
        pid = pending.pop()
        if pid in processes:
            total += processes[pid][1]
        pending.extend(children.get(pid, []))
    return total


def run_measured(
    command: Sequence[str], env: dict[str, str] | None = None, timeout_seconds: float | None = None
) -> Measurement:
    """Runs `command`, sampling its process tree's RSS until it exits.

    Args:
        command: the program and its arguments.
        env: extra environment variables for the child.
        timeout_seconds: kill the child's process group after this long (returncode -9).
    """
    started_at = time.time()
    child = subprocess.Popen(
        list(command),
        env={**os.environ, **(env or {})},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    measurement = Measurement(returncode=0, started_at=started_at, wall_seconds=0.0)
    chunks: list[str] = []
    reader = threading.Thread(target=lambda: chunks.append(child.stdout.read()), daemon=True)
    reader.start()
    deadline = started_at + timeout_seconds if timeout_seconds else None
    while child.poll() is None:
        measurement.samples.append(MemorySample(time.time(), _tree_rss(child.pid)))
        if deadline and time.time() > deadline:
            os.killpg(child.pid, 9)
            break
        time.sleep(SAMPLE_SECONDS)
    measurement.returncode = child.wait()
    measurement.wall_seconds = time.time() - started_at
    reader.join()
    measurement.output = "".join(chunks)
    return measurement
