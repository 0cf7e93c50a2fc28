"""`sacct --json` output files → the allocations of Slurm jobs (`SacctJob`).

A job record is one run of a job on its nodes: a requeued job has one record per run (the same
job id, another start time; `sacct -D` lists them all). Records of jobs that never started
(pending, or cancelled while pending: start 0, nodes `None assigned`) hold no node and are left
out. The job's steps are not read: the allocation is what the job held.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

from hostlist import BadHostlist, expand_hostlist

from connectors.errors import SourceError

SACCT_SUFFIX = ".json"
RUN_FIELDS = ("comment", "job_name", "wckey", "account")
"""The job record's fields that may name its training run (`SacctJob.fields`)."""
NO_NODES = ("", "None assigned")
EXPECTED_SHAPE = (
    "the output of `sacct --json` (Slurm 21.08 or newer): a JSON object with a `jobs` list whose "
    "entries hold `job_id`, `time.start`, `time.end`, `state.current`, `nodes` and `tres.allocated`"
)


@dataclass(frozen=True)
class SacctJob:
    """One run of a job on its nodes.

    Attributes:
        job_id: the job id (an array task's or a heterogeneous component's own id).
        start: when it got its nodes, naive UTC.
        end: when it released them; None while it runs (state RUNNING, or no end yet).
        state: the job's state (`COMPLETED`, `RUNNING`, `REQUEUED`, ...; several joined by `,`).
        nodes: its host names, expanded from the record's host list.
        gpus: GPUs allocated over all its nodes: the untyped `gres/gpu` count, else the sum of the
            typed ones (`gres/gpu:h100`), else 0.
        cpus: CPUs allocated over all its nodes (`cpu` TRES), None when the record has none.
        fields: the texts that may name its run: `comment` (the job's comment), `job_name`,
            `wckey`, `account` (empty when unset).
    """

    job_id: str
    start: datetime
    end: datetime | None
    state: str
    nodes: tuple[str, ...]
    gpus: Decimal
    cpus: Decimal | None
    fields: Mapping[str, str]


class _BadField(Exception):
    def __init__(self, field: str, expected: str, value: object = None, *, missing: bool = False) -> None:
        got = "it is missing" if missing else f"got {json.dumps(value)[:80]}"
        super().__init__(f"`{field}`: expected {expected}, {got}")


def sacct_files(path: Path) -> list[Path]:
    """The file itself, or the folder's `*.json` files, oldest first (by modification time, then
    name): a later file's record of a job run replaces an earlier one's."""
    if path.is_file():
        return [path]
    if not path.is_dir():
        raise SourceError(f"{path}: no such file or folder of `sacct --json` output")
    return sorted(path.glob(f"*{SACCT_SUFFIX}"), key=lambda file: (file.stat().st_mtime_ns, file.name))


def read_sacct(path: Path) -> list[SacctJob]:
    """Every job run of a `sacct --json` file or folder, once each.

    Files whose windows overlap hold the same run more than once: the run is known by (job id,
    start) and the newest file's record wins, so a finished record replaces a running one. A run
    whose record has no comment (a running one) takes its job's comment from another run's record.

    Raises:
        SourceError: a file that is not `sacct --json` output, or a job record that cannot be read.
    """
    runs: dict[tuple[str, datetime], SacctJob] = {}
    for file in sacct_files(path):
        for job in read_sacct_file(file):
            runs[(job.job_id, job.start)] = job
    return _with_job_comments(sorted(runs.values(), key=lambda job: (job.start, job.job_id)))


def _with_job_comments(runs: list[SacctJob]) -> list[SacctJob]:
    """Gives a run without a comment its job's comment, from another run of the job.

    Slurm (22.05) records a job's comment in the accounting database when the job ends, so the
    record of a running job has none; a requeued job's ended run has it, and it is the job's.
    """
    comments = {run.job_id: run.fields["comment"] for run in runs if run.fields["comment"]}
    return [
        replace(run, fields={**run.fields, "comment": comments[run.job_id]})
        if not run.fields["comment"] and run.job_id in comments
        else run
        for run in runs
    ]


def read_sacct_file(file: Path) -> list[SacctJob]:
    """The job runs of one `sacct --json` output file that got nodes.

    Raises:
        SourceError: the file is not JSON of the expected shape, or a job record lacks a field or
            holds a value of the wrong type (naming its index in `jobs`, its id and the field).
    """
    try:
        document = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise SourceError(f"{file}: cannot be read as JSON ({error}): expected {EXPECTED_SHAPE}") from None
    if not isinstance(document, dict) or not isinstance(document.get("jobs"), list):
        found = f"keys {', '.join(sorted(document))}" if isinstance(document, dict) else type(document).__name__
        raise SourceError(f"{file}: unknown shape ({found}): expected {EXPECTED_SHAPE}")
    jobs = []
    for index, record in enumerate(document["jobs"]):
        job_id = record.get("job_id") if isinstance(record, dict) else None
        try:
            job = _job(record)
        except _BadField as error:
            raise SourceError(f"{file}: jobs[{index}] (job {job_id}): {error}") from None
        if job is not None:
            jobs.append(job)
    return jobs


def _job(record: object) -> SacctJob | None:
    if not isinstance(record, dict):
        raise _BadField("jobs[]", "an object", record)
    job_id = record.get("job_id")
    if not isinstance(job_id, int) or isinstance(job_id, bool):
        raise _BadField("job_id", "an integer", job_id)
    start = _time(record, "start")
    nodes = _get(record, "nodes")
    if start is None or nodes in NO_NODES:
        return None
    if not isinstance(nodes, str):
        raise _BadField("nodes", "a host list (`p5-[001-004]`)", nodes)
    try:
        hosts = tuple(expand_hostlist(nodes))
    except BadHostlist:
        raise _BadField("nodes", "a host list (`p5-[001-004]`)", nodes) from None
    state = _state(record)
    end = _time(record, "end")
    allocated = _get(record, "tres", "allocated")
    if not isinstance(allocated, list):
        raise _BadField("tres.allocated", "a list of {type, name, count}", allocated)
    gpus, cpus = _tres(allocated)
    return SacctJob(
        job_id=str(job_id),
        start=start,
        end=None if "RUNNING" in state.split(",") else end,
        state=state,
        nodes=hosts,
        gpus=gpus,
        cpus=cpus,
        fields={
            "comment": _text(record, "comment", "job"),
            "job_name": _text(record, "name"),
            "wckey": _text(record, "wckey", "wckey"),
            "account": _text(record, "account"),
        },
    )


def _get(record: Mapping[str, Any], *keys: str) -> Any:
    value: Any = record
    for depth, key in enumerate(keys):
        if not isinstance(value, dict) or key not in value:
            raise _BadField(".".join(keys[: depth + 1]), "a value", missing=True)
        value = value[key]
    return value


def _number(value: object, field: str) -> int | None:
    """An integer, or a 23.02+ `{"set", "infinite", "number"}` object; None when unset/infinite."""
    if isinstance(value, dict) and isinstance(value.get("set"), bool):
        if not value["set"] or value.get("infinite"):
            return None
        value = value.get("number")
    if not isinstance(value, int) or isinstance(value, bool):
        raise _BadField(field, 'an integer or a {"set", "infinite", "number"} object', value)
    return value


def _time(record: Mapping[str, Any], key: str) -> datetime | None:
    """`time.<key>` as naive UTC; None when 0 or unset (not started, not ended)."""
    seconds = _number(_get(record, "time", key), f"time.{key}")
    if not seconds:
        return None
    return datetime.fromtimestamp(seconds, UTC).replace(tzinfo=None)


def _state(record: Mapping[str, Any]) -> str:
    """`state.current`: a text (21.08, 22.05) or a list of texts (23.02 and newer)."""
    current = _get(record, "state", "current")
    states = [current] if isinstance(current, str) else current
    if not isinstance(states, list) or not states or not all(isinstance(state, str) for state in states):
        raise _BadField("state.current", "a job state or a list of them", current)
    return ",".join(states)


def _tres(allocated: Iterable[object]) -> tuple[Decimal, Decimal | None]:
    untyped: int | None = None
    typed: int = 0
    cpus: int | None = None
    for index, entry in enumerate(allocated):
        if not isinstance(entry, dict):
            raise _BadField(f"tres.allocated[{index}]", "an object {type, name, count}", entry)
        kind, name = entry.get("type"), entry.get("name") or ""
        gpu = kind == "gres" and (name == "gpu" or name.startswith("gpu:"))
        if not gpu and kind != "cpu":
            continue
        count = entry.get("count")
        if not isinstance(count, int) or isinstance(count, bool) or count < 0:
            raise _BadField(f"tres.allocated[{index}].count", "a count ≥ 0", count)
        if kind == "cpu":
            cpus = count
        elif name == "gpu":
            untyped = count
        else:
            typed += count
    return Decimal(untyped if untyped is not None else typed), None if cpus is None else Decimal(cpus)


def _text(record: Mapping[str, Any], key: str, inner: str | None = None) -> str:
    """A text field, or the text inside its object (`comment.job`, `wckey.wckey`); empty when
    absent or null."""
    value = record.get(key)
    if isinstance(value, dict) and inner is not None:
        value = value.get(inner)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise _BadField(f"{key}.{inner}" if inner else key, "a text", value)
    return value
