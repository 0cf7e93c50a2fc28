"""`llm-7b-pt-r1`: pre-training on 16 p5.48xlarge (128 H100) on AWS in early October.

14 nodes run under the Compute Savings Plan in the last days of its term, 2 were launched by hand,
on demand and untagged. Before the run a Glue job tokenizes its data set; during it the nodes
write EBS, replicate checkpoints to Oregon and ship logs. Its checkpoint bucket is untagged and
keeps every checkpoint until a cleanup in November. Its event log has two crashes between
checkpoints and six idle hours between the end of training and the nodes' stop.
"""

from __future__ import annotations

import math
import random
from datetime import datetime, timedelta

from pipelines.demo.aws.catalog import (
    GLUE_JOB,
    INTER_REGION_TRANSFER,
    LOG_INGESTION,
    P5,
    P5_BOX_USAGE,
    S3_STANDARD,
    SAVINGS_PLAN_COVERED_NODES,
    TRAINING_ACCOUNT,
)
from pipelines.demo.aws.export import AWS_DATA_END
from pipelines.demo.aws.lines import cur_line, gb_months, node_volume_lines, savings_plan_covered
from pipelines.demo.periods import HOUR, day_slices, each_hour
from pipelines.demo.story.timeline import checkpoints_saved, run_event

RUN_7B = "llm-7b-pt-r1"
RUN_7B_START = datetime(2026, 10, 3)
RUN_7B_END = datetime(2026, 10, 10, 18)
RUN_7B_NODES = 16
RUN_7B_NODES_WITH_OWNER_TAG = 6
RUN_7B_CHECKPOINT_GB = 98.0
RUN_7B_CHECKPOINT_EVERY = timedelta(hours=6)
RUN_7B_CHECKPOINT_WRITE_SECONDS = 120  # the write time of each checkpoint (checkpoint_interval recommendation)
RUN_7B_CHECKPOINTS_KEPT_AFTER_CLEANUP = 5
RUN_7B_CHECKPOINT_CLEANUP = datetime(2026, 11, 16)
RUN_7B_VOLUME_GB = 2000.0
RUN_7B_LOG_GB_PER_NODE_HOUR = (0.10, 0.14)
RUN_7B_BUCKET = "ckpt-7b"
RUN_7B_LOG_GROUP = "arn:aws:logs:us-east-1:444455556666:log-group:/llm/llm-7b-pt-r1"
RUN_7B_TOKENIZE_START = datetime(2026, 10, 1, 6)
RUN_7B_TOKENIZE_END = datetime(2026, 10, 2, 18)
RUN_7B_TOKENIZE_DPUS = 40.0
RUN_7B_TOKENIZE_JOB = "arn:aws:glue:us-east-1:444455556666:job/tokenize-fineweb-edu-v3.2"
RUN_7B_GPUS = RUN_7B_NODES * P5.gpus
RUN_7B_TRAINING_END = datetime(2026, 10, 10, 12)  # the nodes run on, idle, until RUN_7B_END
RUN_7B_FAILURES = (  # (crash, resume from the last checkpoint)
    (datetime(2026, 10, 5, 9, 30), datetime(2026, 10, 5, 10, 15)),
    (datetime(2026, 10, 8, 16, 45), datetime(2026, 10, 8, 17, 30)),
)
RUN_7B_STEPS_PER_HOUR = 830
RUN_7B_CONFIG_HASH = "sha256:3f9a2c41d7e0"


def cur_lines(rng: random.Random) -> list[dict]:
    """The run's CUR usage lines: tokenizing, instance-hours, volumes, replication, logs, checkpoints."""
    lines = _tokenize_lines()
    for hour in each_hour(RUN_7B_START, RUN_7B_END):
        for node in range(1, RUN_7B_NODES + 1):
            on_demand = cur_line(
                P5_BOX_USAGE,
                "Usage",
                TRAINING_ACCOUNT,
                hour,
                hour + HOUR,
                1.0,
                resource_id=_instance_id(node),
                tags=_tags(node),
            )
            lines += savings_plan_covered(on_demand) if node <= SAVINGS_PLAN_COVERED_NODES else [on_demand]
    for start, end in day_slices(RUN_7B_START, RUN_7B_END):
        lines += node_volume_lines(start, end, RUN_7B_NODES, RUN_7B_VOLUME_GB, "vol-0a1b2c3d4e5f6{node:04d}", _tags)
        saved_that_day = checkpoints_saved(RUN_7B_START, RUN_7B_END, RUN_7B_CHECKPOINT_EVERY, end) - checkpoints_saved(
            RUN_7B_START, RUN_7B_END, RUN_7B_CHECKPOINT_EVERY, start
        )
        replicated_gb = saved_that_day * RUN_7B_CHECKPOINT_GB * rng.uniform(1.0, 1.04)
        lines.append(
            cur_line(
                INTER_REGION_TRANSFER,
                "Usage",
                TRAINING_ACCOUNT,
                start,
                end,
                replicated_gb,
                resource_id=_instance_id(1),
                tags=_tags(1),
            )
        )
        node_hours = RUN_7B_NODES * (end - start) / HOUR
        lines.append(
            cur_line(
                LOG_INGESTION,
                "Usage",
                TRAINING_ACCOUNT,
                start,
                end,
                node_hours * rng.uniform(*RUN_7B_LOG_GB_PER_NODE_HOUR),
                resource_id=RUN_7B_LOG_GROUP,
                tags={"user_training_run": RUN_7B, "user_owner": "alice"},
            )
        )
    for start, end in day_slices(RUN_7B_START, AWS_DATA_END):
        checkpoints = checkpoints_saved(RUN_7B_START, RUN_7B_END, RUN_7B_CHECKPOINT_EVERY, end)
        if start >= RUN_7B_CHECKPOINT_CLEANUP:
            checkpoints = RUN_7B_CHECKPOINTS_KEPT_AFTER_CLEANUP
        lines.append(
            cur_line(
                S3_STANDARD,
                "Usage",
                TRAINING_ACCOUNT,
                start,
                end,
                gb_months(checkpoints * RUN_7B_CHECKPOINT_GB, start, end),
                resource_id=RUN_7B_BUCKET,
            )
        )
    return lines


def _tokenize_lines() -> list[dict]:
    """The Glue job that tokenized the 7B data set before the run."""
    tags = {"user_training_run": RUN_7B, "user_dataset_version": "fineweb-edu-v3.2"}
    return [
        cur_line(
            GLUE_JOB,
            "Usage",
            TRAINING_ACCOUNT,
            hour,
            hour + HOUR,
            RUN_7B_TOKENIZE_DPUS,
            resource_id=RUN_7B_TOKENIZE_JOB,
            tags=tags,
        )
        for hour in each_hour(RUN_7B_TOKENIZE_START, RUN_7B_TOKENIZE_END)
    ]


def _tags(node: int) -> dict[str, str]:
    """Tags of the 7B nodes: the last two were launched by hand without any."""
    if node > SAVINGS_PLAN_COVERED_NODES:
        return {}
    tags = {
        "user_training_run": RUN_7B,
        "user_experiment": "scaling-7b",
        "aws_created_by": "AssumedRole:AROA4XKQ7EXAMPLE7B:alice-launcher",
    }
    if node <= RUN_7B_NODES_WITH_OWNER_TAG:
        tags["user_owner"] = "alice"
    return tags


def _instance_id(node: int) -> str:
    return f"i-0a1b2c3d4e5f6{node:04d}"


def run_events() -> list[dict]:
    """Checkpoints every six hours of wall clock, each written in two minutes; each crash loses the
    work since the last one, and training resumes from it; training ends at RUN_7B_TRAINING_END.
    The telemetry day adds its hourly step timings."""

    step_at = _step_at
    events = [run_event(RUN_7B, RUN_7B_START, "start", 0, gpus=RUN_7B_GPUS, config_hash=RUN_7B_CONFIG_HASH)]
    moment = RUN_7B_START + RUN_7B_CHECKPOINT_EVERY
    while moment <= RUN_7B_TRAINING_END:
        events.append(
            run_event(RUN_7B, moment, "checkpoint", step_at(moment), duration_seconds=RUN_7B_CHECKPOINT_WRITE_SECONDS)
        )
        moment += RUN_7B_CHECKPOINT_EVERY
    for crash, resume in RUN_7B_FAILURES:
        events.append(run_event(RUN_7B, crash, "failure", step_at(crash)))
        events.append(run_event(RUN_7B, resume, "resume", step_at(resume), gpus=RUN_7B_GPUS))
    events.append(run_event(RUN_7B, RUN_7B_TRAINING_END, "end", step_at(RUN_7B_TRAINING_END)))
    events += timing_events()
    return sorted(events, key=lambda event: event["time"])


def _step_at(moment: datetime) -> int:
    """The step trained by `moment`: the steps of the hours since the start, less the work each
    crash lost since its last checkpoint and the time until its resume."""
    lost = sum(
        (min(resume, moment) - _last_checkpoint(crash)) / HOUR for crash, resume in RUN_7B_FAILURES if crash < moment
    )
    return round(((moment - RUN_7B_START) / HOUR - lost) * RUN_7B_STEPS_PER_HOUR)


def _last_checkpoint(moment: datetime) -> datetime:
    return RUN_7B_START + RUN_7B_CHECKPOINT_EVERY * math.floor((moment - RUN_7B_START) / RUN_7B_CHECKPOINT_EVERY)


# Telemetry of one day between the two crashes: a morning whose steps wait for data (the new
# data-loader shards are read cold), and an afternoon with half the nodes nearly idle (a straggler
# rank stalls their collectives). Telemetry never changes a cost: the bill above is the same.
RUN_7B_TELEMETRY_DAY = datetime(2026, 10, 6)
RUN_7B_TELEMETRY_STEP = timedelta(minutes=15)
RUN_7B_INPUT_BOUND = (datetime(2026, 10, 6, 6), datetime(2026, 10, 6, 12))
RUN_7B_INPUT_BOUND_WAIT_SHARE = 0.25
RUN_7B_USUAL_WAIT_SHARE = 0.05
RUN_7B_LOW_UTILIZATION = (datetime(2026, 10, 6, 13), datetime(2026, 10, 6, 16))
RUN_7B_LOW_UTILIZATION_NODES = range(9, RUN_7B_NODES + 1)
RUN_7B_UTILIZATION_PERCENT = {"usual": 85, "input_bound": 62, "low": 10}


def gpu_utilization_series() -> list[dict]:
    """The DCGM exporter's `DCGM_FI_DEV_GPU_UTIL` of every GPU of the run's nodes over the telemetry
    day, as a Prometheus `query_range` answers it (one series per GPU, labelled as EC2 service
    discovery relabels them: `instance_id`)."""
    series = []
    for node in range(1, RUN_7B_NODES + 1):
        for gpu in range(P5.gpus):
            values = []
            moment = RUN_7B_TELEMETRY_DAY
            while moment < RUN_7B_TELEMETRY_DAY + timedelta(days=1):
                values.append([int((moment - datetime(1970, 1, 1)).total_seconds()), str(_utilization(node, moment))])
                moment += RUN_7B_TELEMETRY_STEP
            series.append(
                {
                    "metric": {
                        "__name__": "DCGM_FI_DEV_GPU_UTIL",
                        "gpu": str(gpu),
                        "UUID": f"GPU-7b{node:02d}{gpu:02d}00-0000-4000-8000-00000000{node:02d}{gpu:02d}",
                        "device": f"nvidia{gpu}",
                        "modelName": "NVIDIA H100 80GB HBM3",
                        "Hostname": f"ip-10-0-7-{node}",
                        "instance_id": _instance_id(node),
                        "job": "dcgm-exporter",
                    },
                    "values": values,
                }
            )
    return series


def _utilization(node: int, moment: datetime) -> int:
    if RUN_7B_LOW_UTILIZATION[0] <= moment < RUN_7B_LOW_UTILIZATION[1] and node in RUN_7B_LOW_UTILIZATION_NODES:
        return RUN_7B_UTILIZATION_PERCENT["low"]
    if RUN_7B_INPUT_BOUND[0] <= moment < RUN_7B_INPUT_BOUND[1]:
        return RUN_7B_UTILIZATION_PERCENT["input_bound"]
    return RUN_7B_UTILIZATION_PERCENT["usual"]


def timing_events() -> list[dict]:
    """An hourly `metrics` event over the telemetry day: the hour's step time and the part of it
    spent waiting for the data loader."""
    events = []
    for hour in each_hour(RUN_7B_TELEMETRY_DAY, RUN_7B_TELEMETRY_DAY + timedelta(days=1)):
        share = (
            RUN_7B_INPUT_BOUND_WAIT_SHARE
            if RUN_7B_INPUT_BOUND[0] <= hour < RUN_7B_INPUT_BOUND[1]
            else RUN_7B_USUAL_WAIT_SHARE
        )
        end = hour + HOUR
        events.append(
            run_event(
                RUN_7B, end, "metrics", _step_at(end), step_seconds=3600.0, data_wait_seconds=round(3600 * share, 1)
            )
        )
    return events
