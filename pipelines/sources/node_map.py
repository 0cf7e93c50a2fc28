"""A node map: which cloud resource each host name was over a time range, as a CSV file
(`hostname,resource_id,start,end`, start and end optional ISO-8601 times). Slurm sources map their
hosts with it, and `prometheus` sources the hosts their GPU series name."""

from __future__ import annotations

import csv
from datetime import UTC, datetime
from itertools import pairwise
from pathlib import Path

from connectors.errors import SourceError
from pipelines.sources.intervals import ClusterNode

NODE_MAP_COLUMNS = ("hostname", "resource_id", "start", "end")
REQUIRED_NODE_MAP_COLUMNS = ("hostname", "resource_id")


def read_node_map(file: Path, cluster: str) -> list[ClusterNode]:
    """The node map: which cloud resource each host was over [start, end) (both optional).

    Raises:
        SourceError: a missing file or column, or a bad row, naming the file, line and column;
            a host mapped twice over overlapping times, naming both lines.
    """
    try:
        with file.open(newline="", encoding="utf-8") as handle:
            rows = list(csv.reader(handle))
    except (OSError, UnicodeDecodeError) as error:
        raise SourceError(f"{file}: cannot read the node map: {error}") from None
    header = [name.strip() for name in rows[0]] if rows else []
    missing = [column for column in REQUIRED_NODE_MAP_COLUMNS if column not in header]
    unknown = [column for column in header if column not in NODE_MAP_COLUMNS]
    if missing or unknown:
        raise SourceError(
            f"{file}: line 1: the node map's header must be {','.join(NODE_MAP_COLUMNS)} (start and end "
            f"optional); missing: {', '.join(missing) or 'none'}; unknown: {', '.join(unknown) or 'none'}"
        )
    nodes: list[tuple[int, ClusterNode]] = []
    for line, row in enumerate(rows[1:], start=2):
        if not any(cell.strip() for cell in row):
            continue
        if len(row) != len(header):
            raise SourceError(f"{file}: line {line}: {len(row)} columns, the header has {len(header)}")
        values = dict(zip(header, (cell.strip() for cell in row), strict=True))
        for column in REQUIRED_NODE_MAP_COLUMNS:
            if not values[column]:
                raise SourceError(f"{file}: line {line}: column {column}: empty")
        valid_from = _utc(values.get("start", ""), file, line, "start")
        valid_to = _utc(values.get("end", ""), file, line, "end")
        if valid_from and valid_to and valid_from >= valid_to:
            raise SourceError(f"{file}: line {line}: column end: {valid_to} is not after start {valid_from}")
        node = ClusterNode(cluster, values["hostname"], values["resource_id"], valid_from, valid_to)
        nodes.append((line, node))
    _check_no_overlap(file, nodes)
    return [node for _, node in nodes]


def _utc(text: str, file: Path, line: int, column: str) -> datetime | None:
    if not text:
        return None
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise SourceError(
            f"{file}: line {line}: column {column}: {text!r} is not an ISO-8601 time (2026-05-01T00:00:00Z)"
        ) from None
    return moment.astimezone(UTC).replace(tzinfo=None) if moment.tzinfo else moment


def _check_no_overlap(file: Path, nodes: list[tuple[int, ClusterNode]]) -> None:
    def bounds(node: ClusterNode) -> tuple[datetime, datetime]:
        return node.valid_from or datetime.min, node.valid_to or datetime.max

    ordered = sorted(nodes, key=lambda entry: (entry[1].node, bounds(entry[1])))
    for (line, node), (next_line, following) in pairwise(ordered):
        if node.node == following.node and bounds(following)[0] < bounds(node)[1]:
            raise SourceError(
                f"{file}: lines {min(line, next_line)} and {max(line, next_line)}: host {node.node} is mapped "
                "twice over overlapping times"
            )
