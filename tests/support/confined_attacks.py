"""Runs attack statements on a reader of a lake exactly as `runledger query`'s child does
(kernel sandbox, then the locked reader), bypassing the statement filter; prints which ran.

`python -m tests.support.confined_attacks` reads {"lake": {...}, "spill": dir, "statements": [...]}
on stdin and writes {"ran": [...]} on stdout.
"""

import json
import sys
from pathlib import Path

import duckdb

from pipelines.query import tcp_ports
from pipelines.warehouse.connection import connect_read_only
from pipelines.warehouse.lake import Lake
from pipelines.warehouse.sandbox import confine


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
