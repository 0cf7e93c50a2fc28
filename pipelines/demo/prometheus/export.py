"""Saved Prometheus `query_range` responses, as `curl` writes them: one file per metric."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path


def write_query_range(path: Path, series: list[dict], data_end: datetime | None) -> None:
    """The series as Prometheus answers `query_range` of their metric, samples after `data_end` left out."""
    if data_end is not None:
        cut = int((data_end - datetime(1970, 1, 1)).total_seconds())
        series = [
            {**entry, "values": [value for value in entry["values"] if value[0] <= cut]}
            for entry in series
            if any(value[0] <= cut for value in entry["values"])
        ]
    body = {"status": "success", "data": {"resultType": "matrix", "result": series}}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(body, separators=(",", ":")) + "\n")
