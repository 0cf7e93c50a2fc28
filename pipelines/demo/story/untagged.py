"""Spend no run's tags claim, on both clouds: on AWS a shared dev instance, a NAT gateway, a shared
dataset bucket and CloudWatch API requests; on GCP a sandbox project's dev VM and scratch bucket,
with a promotion credit and a goodwill adjustment. (Support and tax come with each export.)"""

from __future__ import annotations

import random
from collections import defaultdict
from datetime import date, datetime

from pipelines.demo.aws.catalog import (
    CLOUDWATCH_REQUESTS,
    DEV_ACCOUNT,
    G5_BOX_USAGE,
    NAT_GATEWAY_BYTES,
    NAT_GATEWAY_HOURS,
    S3_STANDARD,
    TRAINING_ACCOUNT,
)
from pipelines.demo.aws.export import AWS_DATA_END
from pipelines.demo.aws.lines import cur_line, gb_months
from pipelines.demo.gcp.catalog import HOURS_PER_PRICING_MONTH, N2_STANDARD_16, SANDBOX_PROJECT, STANDARD_STORAGE
from pipelines.demo.gcp.export import GCP_DATA_END
from pipelines.demo.gcp.rows import (
    GcpResource,
    export_time_after,
    gcp_row,
    invoice_month,
    vm_hour_rows,
    vm_resource,
)
from pipelines.demo.periods import DAY, HOUR, OCTOBER, day_slices, hours_in_month, month_of, start_of, workday_hours

DEV_INSTANCE_ID = "i-0e7d5c4b3a2910042"
DEV_INSTANCE_FIRST_DAY = datetime(2026, 10, 12)
DEV_WORKDAY_HOURS = (8, 20)
NAT_GATEWAY_ARN = "arn:aws:ec2:us-east-1:444455556666:natgateway/nat-0f1e2d3c4b5a69788"
NAT_GATEWAY_DAILY_GB = (150.0, 400.0)
SHARED_DATASET_BUCKET = "ml-shared-datasets"
SHARED_DATASET_GB = 5200.0
CLOUDWATCH_DAILY_REQUESTS = (800_000, 1_200_000)

SANDBOX_VM_NAME = "sandbox-dev-1"
SANDBOX_VM_ID = 5518302
SANDBOX_FIRST_DAY = datetime(2026, 10, 5)
SANDBOX_WORKDAY_HOURS = (8, 20)
SANDBOX_SUSTAINED_USE_THRESHOLD = 0.25  # of the month's hours, before sustained-use credits start
SANDBOX_SUSTAINED_USE_DISCOUNT = 0.132
SANDBOX_BUCKET = "ml-sandbox-scratch"
SANDBOX_BUCKET_GIB = 2000.0
SANDBOX_PROMOTION_MONTH = "202610"
SANDBOX_ADJUSTMENT = {
    "cost": -120.0,
    "usage_start": datetime(2026, 11, 20),
    "export_time": datetime(2026, 11, 20, 14, 3, 55, 901266),
    "info": {
        "id": "7f3e2c1a-adj-goodwill",
        "description": "Goodwill adjustment for sandbox storage",
        "mode": "MANUAL_ADJUSTMENT",
        "type": "GENERAL_ADJUSTMENT",
    },
}


def aws_lines(rng: random.Random) -> list[dict]:
    """The untagged AWS usage lines: dev instance, NAT gateway, shared bucket, CloudWatch requests."""
    return _dev_instance_lines() + _nat_gateway_lines(rng) + _shared_bucket_lines() + _cloudwatch_request_lines(rng)


def gcp_rows(rng: random.Random) -> list[dict]:
    """The sandbox project's export rows: its dev VM, its scratch bucket and the adjustment."""
    return _sandbox_vm_rows(rng) + _sandbox_bucket_rows(rng) + [_sandbox_adjustment_row()]


def _dev_instance_lines() -> list[dict]:
    """A shared g5 dev box, weekdays only, tagged by nobody but AWS itself."""
    tags = {"aws_created_by": "IAMUser:AIDA6ODU5EXAMPLEDEV:dave"}
    return [
        cur_line(G5_BOX_USAGE, "Usage", DEV_ACCOUNT, hour, hour + HOUR, 1.0, resource_id=DEV_INSTANCE_ID, tags=tags)
        for hour in workday_hours(DEV_INSTANCE_FIRST_DAY, AWS_DATA_END, DEV_WORKDAY_HOURS)
    ]


def _nat_gateway_lines(rng: random.Random) -> list[dict]:
    lines = []
    for start, end in day_slices(start_of(OCTOBER), AWS_DATA_END):
        hours = (end - start) / HOUR
        lines.append(
            cur_line(NAT_GATEWAY_HOURS, "Usage", TRAINING_ACCOUNT, start, end, hours, resource_id=NAT_GATEWAY_ARN)
        )
        lines.append(
            cur_line(
                NAT_GATEWAY_BYTES,
                "Usage",
                TRAINING_ACCOUNT,
                start,
                end,
                rng.uniform(*NAT_GATEWAY_DAILY_GB),
                resource_id=NAT_GATEWAY_ARN,
            )
        )
    return lines


def _shared_bucket_lines() -> list[dict]:
    return [
        cur_line(
            S3_STANDARD,
            "Usage",
            TRAINING_ACCOUNT,
            start,
            end,
            gb_months(SHARED_DATASET_GB, start, end),
            resource_id=SHARED_DATASET_BUCKET,
        )
        for start, end in day_slices(start_of(OCTOBER), AWS_DATA_END)
    ]


def _cloudwatch_request_lines(rng: random.Random) -> list[dict]:
    return [
        cur_line(CLOUDWATCH_REQUESTS, "Usage", TRAINING_ACCOUNT, start, end, rng.randint(*CLOUDWATCH_DAILY_REQUESTS))
        for start, end in day_slices(start_of(OCTOBER), AWS_DATA_END)
    ]


def _sandbox_vm_rows(rng: random.Random) -> list[dict]:
    """An unlabelled n2 dev VM, weekdays; sustained-use credits once it passed a quarter of the month."""
    resource = vm_resource(SANDBOX_PROJECT, SANDBOX_VM_NAME, SANDBOX_VM_ID, N2_STANDARD_16, {})
    sustained_use = (("SUSTAINED_USAGE_DISCOUNT", "Sustained Usage Discount", -SANDBOX_SUSTAINED_USE_DISCOUNT),)
    hours_this_month: dict[date, int] = defaultdict(int)
    rows = []
    for hour in workday_hours(SANDBOX_FIRST_DAY, GCP_DATA_END, SANDBOX_WORKDAY_HOURS):
        hours_this_month[month_of(hour)] += 1
        past_threshold = hours_this_month[month_of(hour)] > SANDBOX_SUSTAINED_USE_THRESHOLD * hours_in_month(hour)
        rows += vm_hour_rows(
            N2_STANDARD_16,
            resource,
            hour,
            export_time_after(rng, hour + HOUR),
            sustained_use if past_threshold else (),
        )
    return rows


def _sandbox_bucket_rows(rng: random.Random) -> list[dict]:
    bucket = GcpResource(
        SANDBOX_PROJECT,
        f"projects/_/buckets/{SANDBOX_BUCKET}",
        f"//storage.googleapis.com/projects/_/buckets/{SANDBOX_BUCKET}",
        zone=None,
    )
    promotion = (("PROMOTION", "ML research program credit", -1.0),)
    rows = []
    for start, end in day_slices(SANDBOX_FIRST_DAY, GCP_DATA_END):
        gib_months = SANDBOX_BUCKET_GIB * ((end - start) / HOUR) / HOURS_PER_PRICING_MONTH
        credits = promotion if invoice_month(start) == SANDBOX_PROMOTION_MONTH else ()
        rows.append(
            gcp_row(STANDARD_STORAGE, bucket, start, end, gib_months, export_time_after(rng, end), credits=credits)
        )
    return rows


def _sandbox_adjustment_row() -> dict:
    bucket = GcpResource(SANDBOX_PROJECT, None, None, zone=None)
    start = SANDBOX_ADJUSTMENT["usage_start"]
    row = gcp_row(STANDARD_STORAGE, bucket, start, start + DAY, 0.0, SANDBOX_ADJUSTMENT["export_time"])
    return row | {
        "cost": SANDBOX_ADJUSTMENT["cost"],
        "cost_at_list": SANDBOX_ADJUSTMENT["cost"],
        "cost_type": "adjustment",
        "adjustment_info": dict(SANDBOX_ADJUSTMENT["info"]),
    }
