"""`sacct --json -D` output as Slurm 22.05 writes it (OpenAPI DB v0.0.38), and the node map CSV
`hostname,resource_id,start,end` that names each host's cloud resource."""

from __future__ import annotations

import csv
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import hostlist

from pipelines.demo.story.p5_cluster import CLUSTER, EVAL_RUN, ClusterJob, hostname

SLURM_META = {
    "plugin": {"type": "openapi/dbv0.0.38", "name": "Slurm OpenAPI DB v0.0.38"},
    "Slurm": {"version": {"major": 22, "micro": 8, "minor": 5}, "release": "22.05.8"},
}
SLURM_ACCOUNT = "ml-research"
SLURM_PARTITION = "gpu"
CPUS_PER_GPU = 24
MEMORY_MB_PER_GPU = 245_760
SUBMITTED_BEFORE_START = timedelta(minutes=3)
TIME_LIMIT_MINUTES = {"sweep": 2880, "eval": 720}
NO_CPU_TIME = {"seconds": 0, "microseconds": 0}


def write_sacct_json(path: Path, jobs: tuple[ClusterJob, ...], taken_at: datetime) -> None:
    """The jobs as `sacct --json -D` lists them at `taken_at`: jobs started by then, those still
    holding their nodes RUNNING (no end yet)."""
    records = [_sacct_job(job, taken_at) for job in jobs if job.start < taken_at]
    text = json.dumps({"meta": SLURM_META, "errors": [], "jobs": records}, indent=2)
    path.parent.mkdir(parents=True, exist_ok=True)
    # Slurm's JSON writer escapes every slash (`openapi\/dbv0.0.38`)
    path.write_text(text.replace("/", "\\/") + "\n")


def write_node_map(path: Path, rows: list[dict[str, str]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as file:
        writer = csv.DictWriter(file, fieldnames=["hostname", "resource_id", "start", "end"], lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)


def _epoch(moment: datetime) -> int:
    return int(moment.replace(tzinfo=UTC).timestamp())


def _sacct_job(job: ClusterJob, taken_at: datetime) -> dict:
    running = job.end is None or job.end > taken_at
    state = "RUNNING" if running else job.state
    end = taken_at if running else job.end
    submitted = job.start - SUBMITTED_BEFORE_START
    gpus = job.gpus_per_node * len(job.nodes)
    exit_code = {"status": "FAILED", "return_code": 1} if state == "FAILED" else {"status": "SUCCESS", "return_code": 0}
    times = {
        "elapsed": int((end - job.start).total_seconds()),
        "end": 0 if running else _epoch(end),
        "start": _epoch(job.start),
    }
    tres = [
        {"type": "cpu", "name": None, "id": 1, "count": gpus * CPUS_PER_GPU},
        {"type": "mem", "name": None, "id": 2, "count": gpus * MEMORY_MB_PER_GPU},
        {"type": "node", "name": None, "id": 4, "count": len(job.nodes)},
        {"type": "billing", "name": None, "id": 5, "count": gpus * CPUS_PER_GPU},
        {"type": "gres", "name": "gpu", "id": 1001, "count": gpus},
        {"type": "gres", "name": "gpu:h100", "id": 1002, "count": gpus},
    ]
    kind = "eval" if job.training_run == EVAL_RUN else "sweep"
    return {
        "account": SLURM_ACCOUNT,
        "comment": {"administrator": None, "job": job.comment, "system": None},
        "allocation_nodes": len(job.nodes),
        "array": {"job_id": 0, "limits": {"max": {"running": {"tasks": 0}}}, "task": None, "task_id": None},
        "association": {"account": SLURM_ACCOUNT, "cluster": CLUSTER, "partition": None, "user": job.owner},
        "cluster": CLUSTER,
        "constraints": "",
        "container": None,
        "derived_exit_code": exit_code,
        "time": {
            "elapsed": times["elapsed"],
            "eligible": _epoch(submitted),
            "end": times["end"],
            "start": times["start"],
            "submission": _epoch(submitted),
            "suspended": 0,
            "system": NO_CPU_TIME,
            "limit": TIME_LIMIT_MINUTES[kind],
            "total": NO_CPU_TIME,
            "user": NO_CPU_TIME,
        },
        "exit_code": exit_code,
        "flags": ["CLEAR_SCHEDULING", "STARTED_ON_SCHEDULE"],
        "group": SLURM_ACCOUNT,
        "het": {"job_id": 0, "job_offset": None},
        "job_id": job.job_id,
        "name": job.name,
        "mcs": {"label": ""},
        "nodes": hostlist.collect_hostlist([hostname(node) for node in job.nodes]),
        "partition": SLURM_PARTITION,
        "priority": 1,
        "qos": "normal",
        "required": {"CPUs": gpus * CPUS_PER_GPU, "memory": job.gpus_per_node * MEMORY_MB_PER_GPU},
        "kill_request_user": None,
        "reservation": {"id": 0, "name": 0},
        "state": {"current": state, "reason": "None"},
        "steps": [_batch_step(job, state, exit_code, times)],
        "tres": {"allocated": tres, "requested": tres},
        "user": job.owner,
        "wckey": {"wckey": "", "flags": ["ASSIGNED_DEFAULT"]},
        "working_directory": f"/home/{job.owner}/{kind}",
    }


def _batch_step(job: ClusterJob, state: str, exit_code: dict, times: dict[str, int]) -> dict:
    """The job's batch step, on its first node: a requeued run's was cancelled by the requeue."""
    first = hostname(job.nodes[0])
    if state == "REQUEUED":
        state, exit_code = (
            "CANCELLED",
            {"status": "SIGNALED", "return_code": None, "signal": {"signal_id": 15, "name": "Terminated"}},
        )
    no_usage = {"max": [], "min": [], "average": [], "total": []}
    return {
        "nodes": {"list": [first], "count": 1, "range": first},
        "tres": {
            "requested": no_usage,
            "consumed": no_usage,
            "allocated": [
                {"type": "cpu", "name": None, "id": 1, "count": job.gpus_per_node * CPUS_PER_GPU},
                {"type": "mem", "name": None, "id": 2, "count": job.gpus_per_node * MEMORY_MB_PER_GPU},
                {"type": "node", "name": None, "id": 4, "count": 1},
                {"type": "gres", "name": "gpu", "id": 1001, "count": job.gpus_per_node},
            ],
        },
        "time": {**times, "suspended": 0, "system": NO_CPU_TIME, "total": NO_CPU_TIME, "user": NO_CPU_TIME},
        "exit_code": exit_code,
        "tasks": {"count": 1},
        "pid": None,
        "CPU": {"requested_frequency": {"min": 0, "max": 0}, "governor": []},
        "kill_request_user": None,
        "state": state,
        "statistics": {"CPU": {"actual_frequency": 0}, "energy": {"consumed": 0}},
        "step": {"job_id": job.job_id, "het": {"component": None}, "id": "batch", "name": "batch"},
        "task": {"distribution": "Unknown"},
    }
