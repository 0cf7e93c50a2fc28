"""The three budgets (`budgets/<run>.yaml`): what each run was expected to cost, from the
pre-training resource model, its storage (the AWS runs' node volumes too: gp3 at its list price)
and network, and fixed costs."""

from __future__ import annotations

from datetime import date

from pipelines.demo.aws.catalog import (
    EBS_GP3,
    P4D,
    P5,
    RESERVATION_RECURRING_HOURLY,
    RESERVATION_UPFRONT_HOURLY,
    SAVINGS_PLAN_P5_HOURLY,
)
from pipelines.demo.story.llm_3b import RUN_3B
from pipelines.demo.story.llm_7b import RUN_7B, RUN_7B_VOLUME_GB
from pipelines.demo.story.llm_13b import RUN_13B, RUN_13B_VOLUME_GB

BUDGETS = {
    RUN_7B: {
        "training_run": RUN_7B,
        "currency": "USD",
        "window": {"start": date(2026, 10, 1), "end": date(2026, 11, 1)},
        "model": {
            "parameters": 7.0e9,
            "tokens": 6.5e11,
            "gpu_peak_tflops": 989,
            "mfu": 0.40,
            "overhead": 0.10,
            "gpus": 128,
            "gpu_hour_price": SAVINGS_PLAN_P5_HOURLY / P5.gpus,
            "batch_size": 1024,
            "sequence_length": 4096,
        },
        "storage": {
            "checkpoint_gb": 98,
            "checkpoints_retained": 5,
            "dataset_gb": 4000,
            "price_gb_month": 0.023,
            "node_volume_gb": int(RUN_7B_VOLUME_GB),
            "volume_price_gb_month": EBS_GP3.rate,
        },
        "network": {"egress_gb": 2000, "price_gb": 0.02},
        "fixed": {"data": 800, "monitoring": 400},
        "thresholds": {"warning": 1.0, "over": 1.1},
    },
    RUN_13B: {
        "training_run": RUN_13B,
        "currency": "USD",
        "window": {"start": date(2026, 10, 20), "end": date(2026, 11, 20)},
        "model": {
            "method": "sft",
            "parameters": 1.3e10,
            "tokens": 1.0e11,
            "gpu_peak_tflops": 312,
            "mfu": 0.38,
            "overhead": 0.10,
            "gpus": 32,
            "gpu_hour_price": (RESERVATION_UPFRONT_HOURLY + RESERVATION_RECURRING_HOURLY) / P4D.gpus,
        },
        "storage": {
            "checkpoint_gb": 182,
            "checkpoints_retained": 4,
            "dataset_gb": 300,
            "price_gb_month": 0.023,
            "node_volume_gb": int(RUN_13B_VOLUME_GB),
            "volume_price_gb_month": EBS_GP3.rate,
        },
        "network": {"egress_gb": 0, "price_gb": 0.02},
        "fixed": {"monitoring": 200},
        "thresholds": {"warning": 1.0, "over": 1.1},
    },
    RUN_3B: {
        "training_run": RUN_3B,
        "currency": "USD",
        "window": {"start": date(2026, 10, 25), "end": date(2026, 11, 10)},
        "model": {
            "parameters": 3.0e9,
            "tokens": 4.5e11,
            "gpu_peak_tflops": 989,
            "mfu": 0.42,
            "overhead": 0.08,
            "gpus": 32,
            "gpu_hour_price": 7.64,
        },
        "storage": {"checkpoint_gb": 42, "checkpoints_retained": 10, "dataset_gb": 2500, "price_gb_month": 0.026},
        "network": {"egress_gb": 1500, "price_gb": 0.05},
        "fixed": {"monitoring": 150},
        "thresholds": {"warning": 1.0, "over": 1.1},
    },
}
