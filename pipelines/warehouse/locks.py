"""The writers' lock of an embedded lake: its SQLite catalog takes one writer at a time.

SQLite lets several processes read while one writes, but two writers whose transactions overlap
make one of them fail at commit ("database is locked"), whatever the busy timeout. So the writers
of a lake whose catalog is a SQLite file take turns on `<state dir>/lake.lock`: a second writer
(a backfill beside the nightly run, a step of the multiprocess executor) waits, saying so, and
both succeed. Readers never take it. A PostgreSQL catalog serializes commits itself: no lock.
The operating system releases the lock when its process ends, however it ends.
"""

from __future__ import annotations

import fcntl
import os
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TextIO

from pipelines.warehouse.lake import Lake

LOCK_FILE = "lake.lock"
POLL_SECONDS = 0.2

# Lock files this process holds, with how many blocks hold each: blocks of one process nest.
_held: dict[Path, int] = {}


def _say_on_stderr(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


@contextmanager
def writer_lock(lake: Lake, on_wait: Callable[[str], None] = _say_on_stderr) -> Iterator[None]:
    """Holds the lake's writers' lock for the block (nothing for a PostgreSQL catalog), waiting
    for another writer to finish first.

    Args:
        lake: the lake about to be written.
        on_wait: told once, naming the lock and the process holding it, when the lock is busy.
    """
    if lake.sqlite_file is None:
        yield
        return
    path = (lake.state_dir / LOCK_FILE).absolute()
    if path in _held:
        _held[path] += 1
        try:
            yield
        finally:
            _held[path] -= 1
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a+") as handle:
        _acquire(handle, path, on_wait)
        _held[path] = 1
        try:
            yield
        finally:
            del _held[path]
            handle.seek(0)
            handle.truncate()
            fcntl.flock(handle, fcntl.LOCK_UN)


def _acquire(handle: TextIO, path: Path, on_wait: Callable[[str], None]) -> None:
    waited_since = None
    while True:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            break
        except BlockingIOError:
            if waited_since is None:
                waited_since = time.monotonic()
                handle.seek(0)
                holder = handle.read().strip() or "another process"
                on_wait(f"waiting for the writer holding {path} (pid {holder}) to finish its write …")
            time.sleep(POLL_SECONDS)
    if waited_since is not None:
        on_wait(f"… {path} taken after {time.monotonic() - waited_since:.1f} s")
    handle.seek(0)
    handle.truncate()
    handle.write(str(os.getpid()))
    handle.flush()
