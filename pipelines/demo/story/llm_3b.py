"""`llm-3b-pt-gcp`: pre-training on 4 a3-highgpu-8g VMs on GCP from late October, close to its
estimate.

Its GPUs get committed-use credits; it replicates checkpoints to Europe (billed to its first VM,
without labels, one row exported late) and keeps all its checkpoints after it ends. Its event log
is clean: start, a checkpoint every four hours, end.
"""

from __future__ import annotations

import random
from datetime import datetime, timedelta

from pipelines.demo.gcp.catalog import (
    A3_HIGHGPU_8G,
    EGRESS_TO_EMEA,
    HOURS_PER_PRICING_MONTH,
    LOG_VOLUME,
    STANDARD_STORAGE,
    TRAIN_PROJECT,
)
from pipelines.demo.gcp.export import GCP_DATA_END
from pipelines.demo.gcp.rows import GcpResource, export_time_after, gcp_row, vm_hour_rows, vm_resource
from pipelines.demo.periods import DAY, HOUR, day_slices, each_hour
from pipelines.demo.story.timeline import checkpoints_saved, clean_run_events

RUN_3B = "llm-3b-pt-gcp"
RUN_3B_START = datetime(2026, 10, 27)
RUN_3B_END = datetime(2026, 11, 3, 12)
RUN_3B_VMS = 4
RUN_3B_VM_ID_BASE = 7234001
RUN_3B_CHECKPOINT_GIB = 42.0
RUN_3B_CHECKPOINT_EVERY = timedelta(hours=4)
RUN_3B_BUCKET = "ml-train-prod-ckpt-3b"
RUN_3B_DAILY_EGRESS_GIB = (200.0, 260.0)
RUN_3B_LATE_EGRESS_GIB = 37.5
RUN_3B_LATE_EXPORT_TIME = datetime(2026, 11, 4, 5, 12, 9, 482113)
RUN_3B_DAILY_LOG_GIB = (18.0, 26.0)
RUN_3B_GPUS = RUN_3B_VMS * A3_HIGHGPU_8G.gpus
RUN_3B_STEPS_PER_HOUR = 1200
RUN_3B_CONFIG_HASH = "sha256:81d07e5b92af"


def billing_rows(rng: random.Random) -> list[dict]:
    """The run's export rows: VM-hours, its checkpoint bucket, egress to Europe and its logs."""
    return _vm_rows(rng) + _storage_rows(rng) + _egress_rows(rng) + _logging_rows(rng)


def run_events() -> list[dict]:
    """The run's event log: start, a checkpoint every four hours, end."""
    return clean_run_events(
        RUN_3B,
        RUN_3B_START,
        RUN_3B_END,
        RUN_3B_CHECKPOINT_EVERY,
        RUN_3B_GPUS,
        RUN_3B_STEPS_PER_HOUR,
        RUN_3B_CONFIG_HASH,
    )


def _vm_rows(rng: random.Random) -> list[dict]:
    labels = {"training-run": RUN_3B, "owner": "carol"}
    resources = [
        vm_resource(TRAIN_PROJECT, f"llm-3b-train-{index}", RUN_3B_VM_ID_BASE + index, A3_HIGHGPU_8G, labels)
        for index in range(RUN_3B_VMS)
    ]
    rows = []
    for hour in each_hour(RUN_3B_START, RUN_3B_END):
        for resource in resources:
            rows += vm_hour_rows(A3_HIGHGPU_8G, resource, hour, export_time_after(rng, hour + HOUR))
    return rows


def _storage_rows(rng: random.Random) -> list[dict]:
    bucket = GcpResource(
        TRAIN_PROJECT,
        f"projects/_/buckets/{RUN_3B_BUCKET}",
        f"//storage.googleapis.com/projects/_/buckets/{RUN_3B_BUCKET}",
        {"training_run": RUN_3B},
        zone=None,
    )
    rows = []
    for start, end in day_slices(RUN_3B_START, GCP_DATA_END):
        stored_gib = checkpoints_saved(RUN_3B_START, RUN_3B_END, RUN_3B_CHECKPOINT_EVERY, end) * RUN_3B_CHECKPOINT_GIB
        gib_months = stored_gib * ((end - start) / HOUR) / HOURS_PER_PRICING_MONTH
        rows.append(gcp_row(STANDARD_STORAGE, bucket, start, end, gib_months, export_time_after(rng, end)))
    return rows


def _egress_rows(rng: random.Random) -> list[dict]:
    """Checkpoint replication to Europe, billed to the first VM without its labels, plus one late row."""
    first_vm = vm_resource(TRAIN_PROJECT, "llm-3b-train-0", RUN_3B_VM_ID_BASE, A3_HIGHGPU_8G, {})
    rows = [
        gcp_row(
            EGRESS_TO_EMEA,
            first_vm,
            start,
            end,
            rng.uniform(*RUN_3B_DAILY_EGRESS_GIB) * ((end - start) / DAY),
            export_time_after(rng, end),
        )
        for start, end in day_slices(RUN_3B_START, RUN_3B_END)
    ]
    late_day = datetime(2026, 10, 31)
    rows.append(
        gcp_row(EGRESS_TO_EMEA, first_vm, late_day, late_day + DAY, RUN_3B_LATE_EGRESS_GIB, RUN_3B_LATE_EXPORT_TIME)
    )
    return rows


def _logging_rows(rng: random.Random) -> list[dict]:
    log_bucket = GcpResource(
        TRAIN_PROJECT,
        None,
        f"//logging.googleapis.com/projects/{TRAIN_PROJECT.id}/locations/global/buckets/_Default",
        zone=None,
    )
    return [
        gcp_row(
            LOG_VOLUME,
            log_bucket,
            start,
            end,
            rng.uniform(*RUN_3B_DAILY_LOG_GIB) * ((end - start) / DAY),
            export_time_after(rng, end),
        )
        for start, end in day_slices(RUN_3B_START, RUN_3B_END)
    ]
