"""A `slurm` source's usage intervals: each job run on each of its nodes, its labels taken from
`run_from`, and its node map (a CSV file, or the resource tag naming each node's host)."""

from __future__ import annotations

import csv
import re
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from itertools import pairwise
from pathlib import Path

from connectors.errors import SourceError
from connectors.slurm.sacct import SacctJob, read_sacct
from pipelines.sources.intervals import ClusterIntervals, ClusterNode, UsageInterval
from pipelines.sources.slurm.settings import RunPattern, SlurmSource

NODE_MAP_COLUMNS = ("hostname", "resource_id", "start", "end")
REQUIRED_NODE_MAP_COLUMNS = ("hostname", "resource_id")
PAIR_SEPARATORS = re.compile(r"[\s,]+")


def read_intervals(source: SlurmSource, resolve: Callable[[str], Path]) -> ClusterIntervals:
    """The source's usage intervals (one per job run and node, its GPUs and CPUs divided evenly
    over the job's nodes) and its node map.

    Raises:
        SourceError: a `sacct --json` file or a node map row that cannot be read, naming the file
            and the job or line at fault.
    """
    labels_of = run_labels(source.run_from)
    intervals = [
        UsageInterval(
            cluster=source.cluster,
            node=node,
            job_id=job.job_id,
            start=job.start,
            end=job.end,
            gpus=job.gpus / len(job.nodes),
            cpus=None if job.cpus is None else job.cpus / len(job.nodes),
            labels=labels_of(job),
        )
        for job in read_sacct(resolve(source.path))
        for node in job.nodes
    ]
    if isinstance(source.nodes, str):
        return ClusterIntervals(intervals=intervals, nodes=read_node_map(resolve(source.nodes), source.cluster))
    return ClusterIntervals(intervals=intervals, nodes=[], node_tag=source.nodes.tag)


def run_labels(run_from: str | RunPattern) -> Callable[[SacctJob], Mapping[str, str]]:
    """What a job says of itself, as labels, the way `run_from` reads it.

    `comment`: the comment's `key=value` pairs, separated by spaces or commas (other words are
    skipped); `job_name`, `wckey`, `account`: the field's whole value is the training run; a
    pattern: its named groups that matched.
    """
    if isinstance(run_from, RunPattern):
        pattern, field = re.compile(run_from.regex), run_from.field

        def matched(job: SacctJob) -> Mapping[str, str]:
            found = pattern.search(job.fields[field])
            return {key: value for key, value in found.groupdict().items() if value} if found else {}

        return matched
    if run_from == "comment":
        return lambda job: comment_pairs(job.fields["comment"])
    return lambda job: {"training_run": job.fields[run_from]} if job.fields[run_from] else {}


def comment_pairs(comment: str) -> dict[str, str]:
    """`training_run=llm-7b experiment=lr-sweep` (or `,`-separated) → {key: value}."""
    pairs = {}
    for word in PAIR_SEPARATORS.split(comment.strip()):
        key, equals, value = word.partition("=")
        if equals and key and value:
            pairs[key] = value
    return pairs


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
