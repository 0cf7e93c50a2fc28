"""The run registry (`runs.yaml`): each run's metadata, window and the resource patterns that
claim spend its tags missed."""

from __future__ import annotations

from datetime import datetime

from pipelines.demo.story.llm_3b import RUN_3B, RUN_3B_BUCKET
from pipelines.demo.story.llm_7b import RUN_7B, RUN_7B_BUCKET
from pipelines.demo.story.llm_13b import RUN_13B, RUN_13B_BUCKET

RUN_REGISTRY = (
    {
        "id": RUN_7B,
        "experiment": "scaling-7b",
        "dataset_version": "fineweb-edu-v3.2",
        "owner": "alice",
        "start": datetime(2026, 10, 3),
        "end": datetime(2026, 10, 11),
        "resources": [
            "i-0a1*",
            "vol-0a1*",
            RUN_7B_BUCKET,
            f"arn:aws:s3:::{RUN_7B_BUCKET}",
            "arn:aws:ec2:*/i-0a1*",
            "arn:aws:ec2:*/vol-0a1*",
        ],
        "weight": 1,
    },
    {
        "id": RUN_13B,
        "experiment": "ft-13b-chat",
        "dataset_version": "sft-mix-v7",
        "owner": "bob",
        "start": datetime(2026, 10, 24),
        "end": datetime(2026, 11, 14),
        "resources": [
            "i-0b13*",
            "vol-0b13*",
            RUN_13B_BUCKET,
            f"arn:aws:s3:::{RUN_13B_BUCKET}",
            "arn:aws:ec2:*/i-0b13*",
            "arn:aws:ec2:*/vol-0b13*",
        ],
        "weight": 1,
    },
    {
        "id": RUN_3B,
        "experiment": "scaling-3b",
        "dataset_version": "fineweb-edu-v3.2",
        "owner": "carol",
        "start": datetime(2026, 10, 27),
        "end": datetime(2026, 11, 4),
        "resources": [
            "llm-3b-train-*",
            "//compute.googleapis.com/projects/ml-train-prod/zones/*/instances/72340*",
            f"*{RUN_3B_BUCKET}",
        ],
        "weight": 1,
    },
)
