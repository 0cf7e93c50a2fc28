"""The `slurm` source on a real Slurm 22.05 (tests/support/slurm.py): jobs submitted with
`sbatch`, one requeued, read back from `sacct --json` dumps as usage intervals."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from decimal import Decimal
from pathlib import Path

import pytest

from pipelines.sources.intervals import ClusterIntervals, UsageInterval
from pipelines.sources.slurm.reader import read_intervals
from pipelines.sources.slurm.settings import SlurmSource
from tests.support.slurm import CLUSTER, NODE, RecordedJobs, SlurmCluster, local_slurm, record_jobs


@pytest.fixture(scope="module")
def slurm_cluster() -> Iterator[SlurmCluster]:
    """One cluster for the module, stopped after; a server that does not start fails the tests
    with its own log."""
    with local_slurm() as cluster:
        yield cluster


@pytest.fixture(scope="module")
def recorded(slurm_cluster: SlurmCluster, tmp_path_factory: pytest.TempPathFactory) -> RecordedJobs:
    return record_jobs(slurm_cluster, tmp_path_factory.mktemp("sacct"))


def read(path: Path, run_from: object = "comment") -> ClusterIntervals:
    node_map = path.parent / "nodes.csv"
    node_map.write_text(f"hostname,resource_id,start,end\n{NODE},i-0abc,2026-01-01T00:00:00Z,\n")
    source = SlurmSource.model_validate(
        {
            "name": "hpc",
            "kind": "slurm",
            "path": str(path),
            "cluster": CLUSTER,
            "run_from": run_from,
            "nodes": "nodes.csv",
        }
    )
    return read_intervals(source, lambda value: path.parent / value)


def by_job(intervals: ClusterIntervals) -> dict[str, list[UsageInterval]]:
    jobs: dict[str, list[UsageInterval]] = {}
    for interval in intervals.intervals:
        jobs.setdefault(interval.job_id, []).append(interval)
    return jobs


def elapsed_seconds(cluster: SlurmCluster, job_id: str) -> list[int]:
    """Each run's elapsed seconds as sacct's text output says them (requeued runs too)."""
    lines = cluster.run("sacct", "-a", "-D", "-X", "-n", "-P", "-o", "ElapsedRaw", "-j", job_id).split()
    return sorted(int(line) for line in lines)


def test_the_folder_gives_each_job_run_once_the_newest_record_winning(
    recorded: RecordedJobs, slurm_cluster: SlurmCluster
) -> None:
    jobs = by_job(read(recorded.first_dump.parent))

    assert sorted(jobs) == sorted([recorded.finished, recorded.short, recorded.requeued])  # held never started
    assert all(interval.node == NODE and interval.cluster == CLUSTER for runs in jobs.values() for interval in runs)
    [finished], [short] = jobs[recorded.finished], jobs[recorded.short]
    assert (finished.gpus, finished.cpus, short.gpus, short.cpus) == (2, 1, 4, 2)
    # `short` ran in the first dump and has ended in the second, which wins
    assert short.end is not None
    gpu_seconds = {
        job: sum(interval.gpus * Decimal((interval.end - interval.start).total_seconds()) for interval in jobs[job])
        for job in (recorded.finished, recorded.short)
    }
    assert gpu_seconds == {
        recorded.finished: 2 * sum(elapsed_seconds(slurm_cluster, recorded.finished)),
        recorded.short: 4 * sum(elapsed_seconds(slurm_cluster, recorded.short)),
    }


def test_a_requeued_job_gives_one_interval_per_run_the_running_one_open(recorded: RecordedJobs) -> None:
    runs = sorted(by_job(read(recorded.second_dump))[recorded.requeued], key=lambda interval: interval.start)

    assert len(runs) == 2
    first, second = runs
    assert first.end is not None and first.start < first.end <= second.start
    assert second.end is None
    assert [run.gpus for run in runs] == [1, 1]
    assert [dict(run.labels) for run in runs] == [{"training_run": "llm-7b"}] * 2


def test_the_first_dump_alone_holds_the_running_jobs_open(recorded: RecordedJobs) -> None:
    jobs = by_job(read(recorded.first_dump))

    assert jobs[recorded.short][0].end is None
    assert [run.end for run in jobs[recorded.requeued]] == [None]
    assert jobs[recorded.finished][0].end is not None


@pytest.mark.parametrize(
    ("run_from", "finished_labels", "short_labels"),
    [
        (
            "comment",
            {"training_run": "llm-7b", "experiment": "lr-sweep"},
            {"training_run": "llm-13b", "experiment": "base"},
        ),
        ("account", {"training_run": "llm-7b"}, {"training_run": "root"}),
        ("wckey", {}, {"training_run": "exp-base"}),
        (
            {"regex": "^(?P<training_run>[^/]+)/(?P<experiment>.+)$", "field": "job_name"},
            {"training_run": "llm-7b", "experiment": "lr-sweep"},
            {"training_run": "llm-13b", "experiment": "base"},
        ),
    ],
)
def test_run_from_reads_the_labels_slurm_recorded(
    recorded: RecordedJobs, run_from: object, finished_labels: dict, short_labels: dict
) -> None:
    jobs = by_job(read(recorded.second_dump, run_from))

    assert dict(jobs[recorded.finished][0].labels) == finished_labels
    assert dict(jobs[recorded.short][0].labels) == short_labels


def test_the_node_map_resolves_the_node(recorded: RecordedJobs) -> None:
    nodes = read(recorded.second_dump).nodes

    assert [(node.node, node.resource_id, node.valid_from, node.valid_to) for node in nodes] == [
        (NODE, "i-0abc", datetime(2026, 1, 1), None)
    ]
