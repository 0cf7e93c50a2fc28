"""The `slurm` source kind on `sacct --json` files: Slurm 22.05's own output (tests/fixtures/slurm,
written by tests/support/slurm.py), 21.08's and 23.11's (SARC's fixtures), and records derived from
them (multi-node, typed GPUs, bad values)."""

from __future__ import annotations

import copy
import json
import os
import re
import shutil
from datetime import datetime
from decimal import Decimal
from pathlib import Path

import pytest
from pydantic import ValidationError

from connectors.errors import SourceError
from connectors.slurm.sacct import read_sacct, read_sacct_file
from pipelines.config import load_config
from pipelines.config_rules import ConfigError
from pipelines.sources.intervals import ClusterIntervals, UsageInterval
from pipelines.sources.node_map import read_node_map
from pipelines.sources.registry import KIND_NAMES, kind_of
from pipelines.sources.slurm.reader import read_intervals
from pipelines.sources.slurm.settings import SlurmSource
from tests.support import write_config

FIXTURES = Path(__file__).parents[1] / "fixtures" / "slurm"
FIRST, SECOND = FIXTURES / "sacct_22.05_first.json", FIXTURES / "sacct_22.05_second.json"
NODE_MAP = "hostname,resource_id,start,end\ngpu-node1,i-0abc,,\n"


def source(path: Path, run_from: object = "comment", nodes: object = "nodes.csv") -> SlurmSource:
    return SlurmSource.model_validate(
        {"name": "hpc", "kind": "slurm", "path": str(path), "cluster": "p5", "run_from": run_from, "nodes": nodes}
    )


def read(path: Path, run_from: object = "comment", node_map: str = NODE_MAP) -> ClusterIntervals:
    (path.parent / "nodes.csv").write_text(node_map)
    return read_intervals(source(path, run_from), lambda value: path.parent / value)


def copied(tmp_path: Path, *files: Path) -> Path:
    """The files copied into a folder, each one second newer than the one before."""
    folder = tmp_path / "sacct"
    folder.mkdir(parents=True)
    for age, file in enumerate(reversed(files)):
        target = folder / file.name
        shutil.copy(file, target)
        os.utime(target, (1_800_000_000 - age, 1_800_000_000 - age))
    return folder


def runs(intervals: ClusterIntervals) -> list[tuple]:
    return [
        (interval.job_id, interval.node, interval.start, interval.end, interval.gpus, interval.cpus)
        for interval in sorted(intervals.intervals, key=lambda interval: (interval.job_id, interval.start))
    ]


def real_job(**changes: object) -> dict:
    """Job 1 of the real 22.05 output (2 GPUs, 1 CPU, completed), changed."""
    record = copy.deepcopy(json.loads(FIRST.read_text())["jobs"][0])
    record.update(changes)
    return record


def write(tmp_path: Path, *jobs: dict, name: str = "sacct.json") -> Path:
    document = json.loads(FIRST.read_text())
    document["jobs"] = list(jobs)
    path = tmp_path / name
    path.write_text(json.dumps(document))
    return path


def gres(*entries: tuple[str | None, str | None, int]) -> dict:
    return {"allocated": [{"type": kind, "name": name, "id": 1, "count": count} for kind, name, count in entries]}


T0 = datetime(2026, 12, 7, 5, 9, 18)


def at(seconds: int) -> datetime:
    return T0.replace(second=T0.second + seconds)


def test_slurm_22_05_output_gives_one_interval_per_job_run(tmp_path: Path) -> None:
    shutil.copy(SECOND, tmp_path / SECOND.name)
    intervals = read(tmp_path / SECOND.name)

    assert runs(intervals) == [
        ("1", "gpu-node1", at(0), at(1), 2, 1),
        ("2", "gpu-node1", at(0), at(5), 4, 2),
        ("3", "gpu-node1", at(0), at(2), 1, 1),  # requeued: its first run
        ("3", "gpu-node1", at(3), None, 1, 1),  # its second run, still running
    ]
    assert {interval.cluster for interval in intervals.intervals} == {"p5"}
    labels = {(interval.job_id, interval.start): dict(interval.labels) for interval in intervals.intervals}
    assert labels == {
        ("1", at(0)): {"training_run": "llm-7b", "experiment": "lr-sweep"},
        ("2", at(0)): {"training_run": "llm-13b", "experiment": "base"},
        ("3", at(0)): {"training_run": "llm-7b"},
        # the running record has no comment (Slurm stores it when the job ends): the job's, from its first run
        ("3", at(3)): {"training_run": "llm-7b"},
    }


def test_the_newest_file_wins_a_job_run_found_in_several(tmp_path: Path) -> None:
    finished_last = read(copied(tmp_path / "a", FIRST, SECOND))
    running_last = read(copied(tmp_path / "b", SECOND, FIRST))

    assert [(job, end) for job, _, start, end, *_ in runs(finished_last) if job == "2"] == [("2", at(5))]
    assert [(job, end) for job, _, start, end, *_ in runs(running_last) if job == "2"] == [("2", None)]
    # the requeued job's two runs are known by their start times, whichever file is newer
    assert len([run for run in runs(finished_last) if run[0] == "3"]) == 2
    assert len([run for run in runs(running_last) if run[0] == "3"]) == 2


def test_files_of_the_same_time_are_taken_in_name_order(tmp_path: Path) -> None:
    folder = copied(tmp_path, FIRST, SECOND)
    for file in folder.iterdir():
        os.utime(file, (1_800_000_000, 1_800_000_000))

    assert [job.end for job in read_sacct(folder) if job.job_id == "2"] == [at(5)]


def test_slurm_21_08_output(tmp_path: Path) -> None:
    [job] = read_sacct_file(FIXTURES / "sarc_slurm_21_8_8.json")

    assert (job.job_id, job.state, job.nodes, job.gpus, job.cpus) == ("55978384", "REQUEUED", ("cdr896",), 1, 4)
    assert (job.start, job.end) == (datetime(2023, 1, 9, 14, 37, 3), datetime(2023, 1, 10, 16, 49, 46))
    assert job.fields == {"comment": "", "job_name": "submitit", "wckey": "submitit", "account": "rrg-bengioy-ad_gpu"}


def test_slurm_23_11_output_with_its_state_list_and_number_objects() -> None:
    [job] = read_sacct_file(FIXTURES / "sarc_slurm_23_11_5.json")

    assert (job.job_id, job.state, job.nodes, job.gpus, job.cpus) == ("4", "RUNNING", ("mila02",), 2, 4)
    assert (job.start, job.end) == (datetime(2021, 2, 19, 9, 0, 9), None)


def test_a_multi_node_job_splits_its_gpus_and_cpus_evenly_over_its_hosts(tmp_path: Path) -> None:
    whole = real_job(nodes="p5-[001-004]", tres=gres(("cpu", None, 8), ("gres", "gpu", 32)))
    odd = real_job(job_id=7, nodes="p5-[001-004]", tres=gres(("cpu", None, 2), ("gres", "gpu", 6)))
    intervals = read(write(tmp_path, whole, odd))

    assert [(i.job_id, i.node, i.gpus, i.cpus) for i in intervals.intervals] == [
        ("1", "p5-001", 8, 2), ("1", "p5-002", 8, 2), ("1", "p5-003", 8, 2), ("1", "p5-004", 8, 2),
        ("7", "p5-001", Decimal("1.5"), Decimal("0.5")), ("7", "p5-002", Decimal("1.5"), Decimal("0.5")),
        ("7", "p5-003", Decimal("1.5"), Decimal("0.5")), ("7", "p5-004", Decimal("1.5"), Decimal("0.5")),
    ]  # fmt: skip
    assert sum(i.gpus for i in intervals.intervals if i.job_id == "7") == 6


def test_typed_gpus_slurm_counts_under_both_tres_are_counted_once() -> None:
    # a node of `gpu:h100:8` with `AccountingStorageTRES=gres/gpu,gres/gpu:h100`: `--gres=gpu:2`
    # and `--gres=gpu:h100:3` are each allocated under `gres/gpu` and `gres/gpu:h100`
    jobs = read_sacct_file(FIXTURES / "sacct_22.05_typed_gpus.json")

    assert [(job.job_id, job.gpus, job.cpus) for job in jobs] == [("1", 2, 1), ("2", 3, 1)]


@pytest.mark.parametrize(
    ("tres", "gpus"),
    [
        # sacct lists a typed request under both the untyped and the typed TRES: counted once
        (gres(("gres", "gpu", 4), ("gres", "gpu:h100", 4)), 4),
        (gres(("gres", "gpu:h100", 2), ("gres", "gpu:a100", 1)), 3),
        (gres(("cpu", None, 4), ("gres", "gpumem", 80), ("energy", None, None)), 0),
    ],
)
def test_gpus_are_the_untyped_count_else_the_typed_sum(tmp_path: Path, tres: dict, gpus: int) -> None:
    [job] = read_sacct_file(write(tmp_path, real_job(tres=tres)))

    assert job.gpus == gpus


def test_times_as_number_objects_and_jobs_that_never_started(tmp_path: Path) -> None:
    times = real_job(time={"start": {"set": True, "infinite": False, "number": 1796620158}, "end": {"set": False}})
    pending = real_job(job_id=8, time={"start": 0, "end": 0}, nodes="None assigned", state={"current": "PENDING"})
    # cancelled while pending: Slurm gives it a start (= end) but no node and no TRES
    cancelled = real_job(job_id=9, nodes="None assigned", tres={"allocated": []}, state={"current": "CANCELLED"})
    jobs = read_sacct_file(write(tmp_path, times, pending, cancelled))

    assert [(job.job_id, job.start, job.end) for job in jobs] == [("1", at(0), None)]


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ("[1, 2]", "sacct.json: unknown shape (list): expected the output of `sacct --json`"),
        ('{"meta": {}, "nodes": []}', "sacct.json: unknown shape (keys meta, nodes): expected the output of `sacct"),
        ("{not json", "sacct.json: cannot be read as JSON"),
    ],
)
def test_a_file_of_an_unknown_shape_is_refused(tmp_path: Path, document: str, message: str) -> None:
    (tmp_path / "sacct.json").write_text(document)

    with pytest.raises(SourceError, match=f"^{re.escape(f'{tmp_path}/{message}')}"):
        read_sacct(tmp_path)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        (
            {"time": {"start": "yesterday", "end": 0}},
            '`time.start`: expected an integer or a {"set", "infinite", "number"} object, got "yesterday"',
        ),
        ({"time": {"end": 0}}, "`time.start`: expected a value, it is missing"),
        ({"nodes": "p5-[001-"}, '`nodes`: expected a host list (`p5-[001-004]`), got "p5-[001-"'),
        ({"state": {"current": 3}}, "`state.current`: expected a job state or a list of them, got 3"),
        ({"tres": gres(("gres", "gpu", -1))}, "`tres.allocated[0].count`: expected a count ≥ 0, got -1"),
        ({"comment": {"job": 5}}, "`comment.job`: expected a text, got 5"),
    ],
)
def test_a_bad_job_is_named_by_file_index_id_and_field(tmp_path: Path, changes: dict, message: str) -> None:
    path = write(tmp_path, real_job(), real_job(job_id=42, **changes))

    with pytest.raises(SourceError, match=f"^{re.escape(f'{path}: jobs[1] (job 42): {message}')}"):
        read_sacct(path)


def test_a_missing_path_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(SourceError, match="no such file or folder"):
        read_sacct(tmp_path / "absent")


@pytest.mark.parametrize(
    ("run_from", "labels"),
    [
        ("comment", {"training_run": "llm-7b", "experiment": "lr-sweep"}),
        ("job_name", {"training_run": "llm-7b/lr-sweep"}),
        ("account", {"training_run": "llm-7b"}),
        ("wckey", {}),
        (
            {"regex": r"^(?P<training_run>[^/]+)/(?P<experiment>.+)$", "field": "job_name"},
            {"training_run": "llm-7b", "experiment": "lr-sweep"},
        ),
        ({"regex": r"(?P<training_run>llm-\d+b)(-(?P<stage>pt|ft))?", "field": "account"}, {"training_run": "llm-7b"}),
        ({"regex": r"^(?P<training_run>exp-.+)$", "field": "job_name"}, {}),
    ],
)
def test_run_from(tmp_path: Path, run_from: object, labels: dict) -> None:
    intervals = read(write(tmp_path, real_job()), run_from)

    assert [dict(interval.labels) for interval in intervals.intervals] == [labels]


def test_comment_pairs_separated_by_spaces_or_commas(tmp_path: Path) -> None:
    comment = {"job": " training_run=llm-70b,experiment=ablation  owner=ml-infra note dataset_version= "}
    [interval] = read(write(tmp_path, real_job(comment=comment))).intervals

    assert dict(interval.labels) == {"training_run": "llm-70b", "experiment": "ablation", "owner": "ml-infra"}


def test_a_pattern_needs_a_named_group() -> None:
    with pytest.raises(ValidationError, match="needs at least one named group"):
        source(Path("x"), {"regex": "llm-.*", "field": "job_name"})
    with pytest.raises(ValidationError, match="not a regular expression"):
        source(Path("x"), {"regex": "(?P<run>", "field": "job_name"})
    with pytest.raises(ValidationError, match="run_from"):
        source(Path("x"), "partition")


def test_the_node_map_and_the_node_tag(tmp_path: Path) -> None:
    node_map = (
        "hostname,resource_id,start,end\n"
        "p5-001,i-0aaa,,2026-05-01T00:00:00Z\n"
        "p5-001,i-0bbb,2026-05-01T00:00:00Z,\n"
        "p5-002,i-0ccc,2026-04-30T22:00:00-02:00,\n"
    )
    intervals = read(write(tmp_path, real_job(nodes="p5-[001-002]")), node_map=node_map)
    tagged = read_intervals(
        source(tmp_path / "sacct.json", nodes={"tag": "slurm-node"}), lambda value: tmp_path / value
    )

    assert [(n.node, n.resource_id, n.valid_from, n.valid_to) for n in intervals.nodes] == [
        ("p5-001", "i-0aaa", None, datetime(2026, 5, 1)),
        ("p5-001", "i-0bbb", datetime(2026, 5, 1), None),
        ("p5-002", "i-0ccc", datetime(2026, 5, 1), None),
    ]
    assert {node.cluster for node in intervals.nodes} == {"p5"} and intervals.node_tag is None
    assert (tagged.nodes, tagged.node_tag, len(tagged.intervals)) == ([], "slurm-node", 2)


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        (
            "host,resource_id\n",
            "line 1: the node map's header must be hostname,resource_id,start,end .*missing: hostname; unknown: host",
        ),
        (
            "hostname,resource_id,start\np5-001,i-0aaa,\np5-002,i-0bbb,May 1st\n",
            "line 3: column start: 'May 1st' is not an ISO-8601 time",
        ),
        ("hostname,resource_id\np5-001,\n", "line 2: column resource_id: empty"),
        ("hostname,resource_id\np5-001,i-0aaa,extra\n", "line 2: 3 columns, the header has 2"),
        (
            "hostname,resource_id,start,end\np5-001,i-0aaa,2026-05-02,2026-05-01\n",
            "line 2: column end: 2026-05-01 00:00:00 is not after start",
        ),
        (
            "hostname,resource_id,end\np5-001,i-0aaa,\np5-001,i-0bbb,2026-05-01\n",
            "lines 2 and 3: host p5-001 is mapped twice over overlapping times",
        ),
    ],
)
def test_a_bad_node_map_row_names_the_file_line_and_column(tmp_path: Path, rows: str, message: str) -> None:
    (tmp_path / "nodes.csv").write_text(rows)

    with pytest.raises(SourceError, match=f"^{tmp_path}/nodes.csv: {message}"):
        read_node_map(tmp_path / "nodes.csv", "p5")


def test_the_kind_is_registered_as_a_scheduler_source(tmp_path: Path) -> None:
    settings = source(tmp_path)
    kind = kind_of(settings)

    assert "slurm" in KIND_NAMES and not kind.billing and kind.intervals is not None
    assert settings.local_path() == ("path", str(tmp_path))
    shutil.copy(FIRST, tmp_path / FIRST.name)
    (tmp_path / "nodes.csv").write_text(NODE_MAP)
    intervals = kind.intervals(source(tmp_path / FIRST.name), lambda value: tmp_path / value)
    assert all(isinstance(interval, UsageInterval) for interval in intervals.intervals)
    assert sorted({interval.job_id for interval in intervals.intervals}) == ["1", "2", "3"]


@pytest.mark.parametrize(
    ("entry", "expected"),
    [
        ("{name: s, kind: slurm, path: nowhere, cluster: p5, nodes: n.csv}", "sources[0].path: "),
        ("{name: s, kind: slurm, path: ., nodes: n.csv}", "sources[0].cluster: Field required"),
        ("{name: s, kind: slurm, path: ., cluster: p5}", "sources[0].nodes: Field required"),
        ("{name: s, kind: slurm, path: ., cluster: p5, nodes: {tag: ''}}", "sources[0].nodes"),
        ("{name: s, kind: slurm, path: ., cluster: p5, nodes: n.csv, run_from: qos}", "sources[0].run_from"),
    ],
)
def test_a_bad_slurm_entry_names_its_key(tmp_path: Path, entry: str, expected: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(expected)):
        load_config(write_config(tmp_path, f"sources:\n  - {entry}\n"))


def test_a_slurm_entry_loads_with_its_path_resolved(tmp_path: Path) -> None:
    (tmp_path / "sacct").mkdir()
    text = "sources:\n  - {name: s, kind: slurm, path: sacct, cluster: p5, nodes: {tag: slurm-node}}\n"
    config = load_config(write_config(tmp_path, text))

    [entry] = config.sources
    assert (entry.kind, entry.run_from, entry.nodes.tag) == ("slurm", "comment", "slurm-node")
    assert config.resolve(entry.path) == tmp_path / "sacct"
