"""`p5-cluster`: a Slurm cluster of 4 p5.48xlarge (32 H100) on AWS, shared by a learning-rate sweep
and checkpoint evaluations for three days in November.

The nodes run on demand from 2026-11-17 00:00 to 11-20 00:00 UTC and carry no run tag: only the
scheduler's accounting (`sacct --json`) says who held which GPUs when. Dana's sweep
(`lr-sweep-1b`) trains a 1B model at twelve learning rates on 2 to 8 GPUs each, then the best one
longer on two nodes; Erin evaluates the 7B run's checkpoints (`eval-7b-ckpts`). One sweep job is
requeued, one ends in the middle of an hour, and the last evaluation still runs when the last
accounting snapshot is taken, 15 minutes before the nodes are stopped. Every job starts and ends
on a quarter hour, so each job's share of a node-hour is a whole number of 1/32 of it: the split
is exact to the cent and can be checked by hand (docs/demo.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from pipelines.demo.aws.catalog import P5, P5_BOX_USAGE, TRAINING_ACCOUNT
from pipelines.demo.aws.lines import cur_line
from pipelines.demo.periods import HOUR, each_hour

CLUSTER = "p5-cluster"
CLUSTER_START = datetime(2026, 11, 17)
CLUSTER_END = datetime(2026, 11, 20)
CLUSTER_NODES = 4
SACCT_TAKEN_AT = datetime(2026, 11, 19, 23, 45)  # the last nightly `sacct --json` before the stop
SWEEP_EXPERIMENT = "lr-sweep-1b"
SWEEP_OWNER = "dana"
SWEEP_DATASET = "fineweb-edu-v3.2"
EVAL_RUN = "eval-7b-ckpts"
EVAL_EXPERIMENT = "evals"
EVAL_OWNER = "erin"
GPUS_PER_NODE = P5.gpus


def hostname(node: int) -> str:
    return f"p5-{node:03d}"


def instance_id(node: int) -> str:
    """Outside every registry pattern of the other runs (`i-0a1*`, `i-0b13*`)."""
    return f"i-0c5e7f9a1b3d2{node:04d}"


@dataclass(frozen=True)
class ClusterJob:
    """One allocation as `sacct -D` lists it: a requeued job is several, with the same id.

    Attributes:
        job_id: Slurm's job id.
        name: the job name.
        training_run: the run the job's comment names.
        nodes: the node numbers it held (all of each node's `gpus_per_node`).
        gpus_per_node: GPUs it held on each of its nodes.
        start, end: when it held them; `end` None while it still runs.
        state: Slurm's final state of the record (COMPLETED, FAILED, REQUEUED, RUNNING).
    """

    job_id: int
    name: str
    training_run: str
    nodes: tuple[int, ...]
    gpus_per_node: int
    start: datetime
    end: datetime | None
    state: str = "COMPLETED"

    @property
    def owner(self) -> str:
        return EVAL_OWNER if self.training_run == EVAL_RUN else SWEEP_OWNER

    @property
    def comment(self) -> str:
        """The job's dimensions as `key=value` pairs: the sweep's script separates them by spaces,
        the evaluation's by commas."""
        if self.training_run == EVAL_RUN:
            return f"training_run={EVAL_RUN},experiment={EVAL_EXPERIMENT},owner={EVAL_OWNER}"
        return (
            f"training_run={self.training_run} experiment={SWEEP_EXPERIMENT} "
            f"dataset_version={SWEEP_DATASET} owner={SWEEP_OWNER}"
        )


def _sweep(lr: str) -> str:
    return f"{SWEEP_EXPERIMENT}-lr{lr}"


def _at(day: int, hour: int, minute: int = 0) -> datetime:
    return datetime(2026, 11, day, hour, minute)


JOBS = (
    ClusterJob(4101, "sweep-lr1e-4", _sweep("1e-4"), (1,), 4, _at(17, 6), _at(18, 2)),
    ClusterJob(4102, "sweep-lr2e-4", _sweep("2e-4"), (1,), 4, _at(17, 6), _at(18, 0, 30)),
    ClusterJob(4103, "sweep-lr3e-4", _sweep("3e-4"), (2,), 4, _at(17, 6), _at(18, 1)),
    ClusterJob(4104, "sweep-lr6e-4", _sweep("6e-4"), (2,), 2, _at(17, 6), _at(17, 22, 30)),
    ClusterJob(4105, "sweep-lr1e-3", _sweep("1e-3"), (2,), 2, _at(17, 6), _at(17, 11, 15), "FAILED"),
    ClusterJob(4106, "sweep-lr2e-3", _sweep("2e-3"), (3,), 8, _at(17, 6), _at(18, 8)),
    ClusterJob(4107, "eval-7b", EVAL_RUN, (4,), 4, _at(17, 7), _at(17, 19)),
    ClusterJob(4108, "eval-7b", EVAL_RUN, (4,), 2, _at(17, 10, 15), _at(17, 13, 45)),
    ClusterJob(4109, "sweep-lr3e-3", _sweep("3e-3"), (4,), 2, _at(17, 14), _at(17, 19, 30), "REQUEUED"),
    ClusterJob(4109, "sweep-lr3e-3", _sweep("3e-3"), (2,), 2, _at(17, 23), _at(18, 14)),
    ClusterJob(4110, "sweep-lr4e-4", _sweep("4e-4"), (2,), 4, _at(18, 2), _at(18, 20)),
    ClusterJob(4111, "sweep-lr8e-4", _sweep("8e-4"), (4,), 2, _at(18, 2), _at(18, 13, 30)),
    ClusterJob(4112, "eval-7b", EVAL_RUN, (4,), 4, _at(18, 2), _at(18, 12)),
    ClusterJob(4113, "sweep-lr5e-4", _sweep("5e-4"), (1,), 4, _at(18, 3), _at(18, 21)),
    ClusterJob(4114, "sweep-lr6e-3", _sweep("6e-3"), (1,), 4, _at(18, 3), _at(18, 11)),
    ClusterJob(4115, "sweep-lr4e-3", _sweep("4e-3"), (3,), 2, _at(18, 8, 15), _at(18, 13, 45)),
    ClusterJob(4116, "sweep-lr3e-4-long", _sweep("3e-4-long"), (3, 4), 8, _at(18, 14), _at(19, 8)),
    ClusterJob(4117, "eval-7b", EVAL_RUN, (2,), 4, _at(18, 21), _at(19, 3)),
    ClusterJob(4118, "eval-7b", EVAL_RUN, (1,), 8, _at(18, 22), _at(19, 6)),
    ClusterJob(4119, "eval-7b", EVAL_RUN, (1,), 2, _at(19, 8), _at(19, 13, 30)),
    ClusterJob(4120, "eval-7b", EVAL_RUN, (2,), 4, _at(19, 8), _at(19, 20)),
    ClusterJob(4121, "eval-7b", EVAL_RUN, (2,), 4, _at(19, 9), _at(19, 19)),
    ClusterJob(4122, "eval-7b", EVAL_RUN, (3,), 8, _at(19, 10), _at(19, 22)),
    ClusterJob(4123, "eval-7b", EVAL_RUN, (4,), 4, _at(19, 10), _at(19, 21)),
    ClusterJob(4124, "eval-7b", EVAL_RUN, (1,), 8, _at(19, 15), None, "RUNNING"),
)


def cur_lines() -> list[dict]:
    """The nodes' instance-hours at the on-demand rate, without tags."""
    return [
        cur_line(
            P5_BOX_USAGE,
            "Usage",
            TRAINING_ACCOUNT,
            hour,
            hour + HOUR,
            1.0,
            resource_id=instance_id(node),
        )
        for hour in each_hour(CLUSTER_START, CLUSTER_END)
        for node in range(1, CLUSTER_NODES + 1)
    ]


def node_map() -> list[dict[str, str]]:
    """The node map's rows: each host's instance over the three days."""
    return [
        {
            "hostname": hostname(node),
            "resource_id": instance_id(node),
            "start": f"{CLUSTER_START:%Y-%m-%dT%H:%M:%SZ}",
            "end": f"{CLUSTER_END:%Y-%m-%dT%H:%M:%SZ}",
        }
        for node in range(1, CLUSTER_NODES + 1)
    ]
