"""The warehouse's run lock: one writing run at a time, released however the process ends."""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


class RunInProgress(RuntimeError):
    """Another `runledger run` holds the warehouse's run lock (exit 1)."""


# Lock files this process holds, with how many blocks hold each: `runledger run` locks for the
# whole run, and each asset locks again around its writes (a Dagster step may be its own process).
_held_locks: dict[Path, int] = {}


@contextmanager
def run_lock(warehouse: Path) -> Iterator[Path]:
    """Holds an exclusive lock on `<warehouse>.lock` for the block; the operating system releases
    it when the process ends, however it ends, so a killed run never leaves a stale lock. Blocks
    of one process nest: only the outermost takes and releases the lock.

    Raises:
        RunInProgress: another process holds the lock; the message names the file and its pid.
    """
    lock_path = warehouse.with_name(warehouse.name + ".lock").absolute()
    if lock_path in _held_locks:
        _held_locks[lock_path] += 1
        try:
            yield lock_path
        finally:
            _held_locks[lock_path] -= 1
        return
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    with lock_path.open("a+") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = handle.read().strip() or "unknown"
            raise RunInProgress(
                f"another run is in progress (lock {lock_path} held by pid {holder}); wait for it to finish"
            ) from None
        handle.seek(0)
        handle.truncate()
        handle.write(str(os.getpid()))
        handle.flush()
        _held_locks[lock_path] = 1
        try:
            yield lock_path
        finally:
            del _held_locks[lock_path]
            handle.seek(0)
            handle.truncate()
            fcntl.flock(handle, fcntl.LOCK_UN)
