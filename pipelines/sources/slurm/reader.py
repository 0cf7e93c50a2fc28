"""A `slurm` source's usage intervals: each job run on each of its nodes, its labels taken from
`run_from`, and its node map (a CSV file, or the resource tag naming each node's host)."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from pathlib import Path

from connectors.slurm.sacct import SacctJob, read_sacct
from pipelines.sources.intervals import ClusterIntervals, UsageInterval
from pipelines.sources.node_map import read_node_map
from pipelines.sources.slurm.settings import RunPattern, SlurmSource

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
