"""`llm-13b-ft-r2`: fine-tuning on 4 p4d.24xlarge on AWS across the October/November boundary.

Every instance-hour is discounted by the Reserved Instances, which sit idle the rest of the two
months. Half the nodes are tagged `training_run`/`owner`, the other half `run_id`/`team`.
"""

from __future__ import annotations

import random
from datetime import datetime, timedelta

from pipelines.demo.aws.catalog import LOG_INGESTION, P4D_BOX_USAGE, S3_STANDARD, TRAINING_ACCOUNT
from pipelines.demo.aws.export import AWS_DATA_END
from pipelines.demo.aws.lines import cur_line, gb_months, node_volume_lines, reserved_instance_usage
from pipelines.demo.periods import HOUR, day_slices, each_hour
from pipelines.demo.story.timeline import checkpoints_saved

RUN_13B = "llm-13b-ft-r2"
RUN_13B_START = datetime(2026, 10, 24)
RUN_13B_END = datetime(2026, 11, 13, 12)
RUN_13B_NODES = 4
RUN_13B_CHECKPOINT_GB = 182.0
RUN_13B_CHECKPOINT_EVERY = timedelta(hours=12)
RUN_13B_CHECKPOINTS_KEPT = 4
RUN_13B_VOLUME_GB = 1000.0
RUN_13B_LOG_GB_PER_NODE_HOUR = (0.05, 0.07)
RUN_13B_BUCKET = "ckpt-13b-ft"


def cur_lines(rng: random.Random) -> list[dict]:
    """The run's CUR usage lines: reserved instance-hours, volumes, logs and its checkpoint bucket."""
    lines = []
    for hour in each_hour(RUN_13B_START, RUN_13B_END):
        for node in range(1, RUN_13B_NODES + 1):
            on_demand = cur_line(
                P4D_BOX_USAGE,
                "Usage",
                TRAINING_ACCOUNT,
                hour,
                hour + HOUR,
                1.0,
                resource_id=f"i-0b13f5e6d7c8a{node:04d}",
                tags=_tags(node),
            )
            lines.append(reserved_instance_usage(on_demand))
    for start, end in day_slices(RUN_13B_START, RUN_13B_END):
        lines += node_volume_lines(start, end, RUN_13B_NODES, RUN_13B_VOLUME_GB, "vol-0b13f5e6d7c8a{node:04d}", _tags)
        node_hours = RUN_13B_NODES * (end - start) / HOUR
        lines.append(
            cur_line(
                LOG_INGESTION,
                "Usage",
                TRAINING_ACCOUNT,
                start,
                end,
                node_hours * rng.uniform(*RUN_13B_LOG_GB_PER_NODE_HOUR),
                resource_id="arn:aws:logs:us-east-1:444455556666:log-group:/llm/llm-13b-ft-r2",
                tags={"user_training_run": RUN_13B},
            )
        )
    for start, end in day_slices(RUN_13B_START, AWS_DATA_END):
        saved = checkpoints_saved(RUN_13B_START, RUN_13B_END, RUN_13B_CHECKPOINT_EVERY, end)
        stored_gb = min(saved, RUN_13B_CHECKPOINTS_KEPT) * RUN_13B_CHECKPOINT_GB
        lines.append(
            cur_line(
                S3_STANDARD,
                "Usage",
                TRAINING_ACCOUNT,
                start,
                end,
                gb_months(stored_gb, start, end),
                resource_id=RUN_13B_BUCKET,
                tags={"user_run_id": RUN_13B},
            )
        )
    return lines


def _tags(node: int) -> dict[str, str]:
    """Two tagging conventions on the 13B nodes: `training_run`/`owner`, and `run_id`/`team`."""
    if node <= RUN_13B_NODES // 2:
        return {"user_training_run": RUN_13B, "user_owner": "bob", "user_dataset": "sft-mix-v7"}
    return {"user_run_id": RUN_13B, "user_team": "bob", "user_experiment": "ft-13b-chat"}
