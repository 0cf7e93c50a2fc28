"""Registry overlaps and contradictions, reported by `runledger check`.

Two entries overlap when a resource of the loaded data (a line item's ResourceId, a resource of an
AWS tag snapshot) matches a glob of each while their windows share a moment: attribution then
splits that resource's lines by weight, which is right for a shared eval node and a mistake for a
copy-pasted entry, so the user is shown each one. Globs that could match a common id no resource
has are no news: nothing is split.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from itertools import combinations

import duckdb

from pipelines.attribution.registry import RegisteredRun
from pipelines.attribution.settings import SharedRule
from pipelines.warehouse.sql import read_sql


@dataclass(frozen=True)
class Overlap:
    """Two registry entries claiming a common resource at a common time."""

    first: RegisteredRun
    second: RegisteredRun
    first_pattern: str
    second_pattern: str
    example_resource: str
    start: datetime | None
    end: datetime | None

    def describe(self) -> str:
        window = (
            f"{_moment(self.start) if self.start else 'the beginning'} to "
            f"{_moment(self.end) if self.end else 'open end'}"
        )
        return (
            f"overlap: runs {self.first.id} ({self.first_pattern!r}) and {self.second.id} ({self.second_pattern!r}) "
            f"both claim resources such as {self.example_resource!r} from {window}; "
            f"their lines are split by weight {self.first.weight:g}:{self.second.weight:g}"
        )


def _moment(moment: datetime) -> str:
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC).replace(tzinfo=None)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _common_window(first: RegisteredRun, second: RegisteredRun) -> tuple[datetime | None, datetime | None] | None:
    starts = [moment for moment in (first.start, second.start) if moment]
    ends = [moment for moment in (first.end, second.end) if moment]
    start, end = (max(starts) if starts else None), (min(ends) if ends else None)
    if start and end and end <= start:
        return None
    return start, end


def registry_overlaps(runs: list[RegisteredRun], matched: Mapping[str, Sequence[str]]) -> list[Overlap]:
    """Every pair of entries with a resource and a moment in common (first resource per pair).

    Args:
        runs: the registry.
        matched: per glob, the resources of the loaded data it matches, sorted (a glob matching
            none may be left out).
    """
    found = []
    for first, second in combinations(runs, 2):
        window = _common_window(first, second)
        if window is None:
            continue
        claimed = {resource: pattern for pattern in second.resources for resource in matched.get(pattern, ())}
        for first_pattern in first.resources:
            example = next((resource for resource in matched.get(first_pattern, ()) if resource in claimed), None)
            if example is not None:
                found.append(Overlap(first, second, first_pattern, claimed[example], example, *window))
                break
    return found


def contradictions(runs: list[RegisteredRun], rules: list[SharedRule]) -> list[str]:
    """Configuration that contradicts the registry: fixed shared-cost weights for unregistered runs."""
    if not runs:
        return []
    known = {run.id for run in runs}
    return [
        f"contradiction: attribution.shared[{index}].weights: {run_id} is not in the run registry "
        "(its share is attributed to that id all the same)"
        for index, rule in enumerate(rules)
        for run_id in (rule.weights or {})
        if run_id not in known
    ]


def registry_resources(conn: duckdb.DuckDBPyConnection, runs: list[RegisteredRun]) -> dict[str, list[str]]:
    """Per glob of the registry, the resources of the loaded data it matches (`registry_overlaps`)."""
    patterns = sorted({pattern for run in runs for pattern in run.resources})
    if not patterns:
        return {}
    rows = conn.execute(read_sql("attribution/registry_resources"), {"patterns": patterns}).fetchall()
    return dict(rows)
