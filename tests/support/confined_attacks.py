"""Runs attack statements on a reader of a lake exactly as `runledger query`'s child does
(kernel sandbox, then the locked reader), bypassing the statement filter; prints which ran.

`python -m tests.support.confined_attacks` reads {"lake": {...}, "spill": dir, "statements": [...]}
on stdin and writes {"ran": [...]} on stdout; `run_confined` is the tests' side of it.
"""

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import duckdb

from pipelines.query import keep_wal_index, tcp_ports
from pipelines.warehouse.connection import connect_read_only
from pipelines.warehouse.lake import Lake
from pipelines.warehouse.sandbox import confine
from tests.support import REPO


def run_confined(lake: Lake, spill: Path, statements: list[str]) -> list[str]:
    """Runs `statements` in a confined child process, one reader's connection each; returns those
    that ran without an error."""
    request = {"lake": {**dataclasses.asdict(lake), "state_dir": str(spill), "legacy_file": None}}
    request |= {"spill": str(spill), "statements": statements}
    with keep_wal_index(lake):
        child = subprocess.run(
            [sys.executable, "-m", "tests.support.confined_attacks"],
            input=json.dumps(request),
            capture_output=True,
            text=True,
            cwd=REPO,
            check=True,
        )
    return json.loads(child.stdout)["ran"]


def main() -> None:
    request = json.loads(sys.stdin.read())
    spill = Path(request["spill"])
    lake = Lake(**{**request["lake"], "state_dir": spill, "legacy_file": None})
    confine(spill, tcp_ports(lake))
    ran = []
    for statement in request["statements"]:
        conn = connect_read_only(lake)
        try:
            conn.execute(statement).fetchall()
            ran.append(statement)
        except duckdb.Error:
            pass
        finally:
            conn.close()
    print(json.dumps({"ran": ran}))


if __name__ == "__main__":
    main()
