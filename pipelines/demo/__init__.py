"""The deterministic demo data set behind `runledger demo` and `make run`.

`write_demo(root)` writes a complete demo project: `root/runledger.yaml` and, under
`root/.runledger/demo/`, an AWS CUR 2.0 export (Parquet, Data Exports layout), a GCP detailed
billing export (newline-delimited JSON, BigQuery schema), a run registry and three budgets.
Every call writes the same bytes: one seeded `random.Random`, fixed timestamps, Parquet without
creation times.

The story, October and November 2026:
- `llm-7b-pt-r1` pre-trains on 16 p5.48xlarge (128 H100) on AWS. 14 nodes run under a Compute
  Savings Plan in the last days of its term, 2 were launched by hand, on demand and untagged (the
  registry catches them). It needs more GPU-hours than its budget assumed and ends over budget.
  Its checkpoint bucket is untagged and keeps costing after the run.
- `llm-13b-ft-r2` fine-tunes on 4 p4d.24xlarge under Reserved Instances across the month
  boundary; it stays under budget, while the reservations sit idle the rest of the two months.
- `llm-3b-pt-gcp` pre-trains on 4 a3-highgpu-8g VMs on GCP with committed-use credits, close to
  its estimate.
- Untagged spend on both clouds: a shared dev instance, a NAT gateway, a shared dataset bucket,
  CloudWatch API requests, support, tax, a sandbox project.
- A run event log (JSON lines, one file per run) for the waste analysis: `llm-7b-pt-r1` crashes
  twice between checkpoints, finishes training six hours before its nodes are stopped, and
  keeps every checkpoint where its budget planned five; `llm-3b-pt-gcp` runs cleanly but keeps
  its 45 checkpoints (the budget planned ten) after it ends.
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
import random
import uuid
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import yaml

from pipelines.config import ConfigError

SEED = 20261003
CONFIG_FILE_NAME = "runledger.yaml"
DEMO_FOLDER = Path(".runledger") / "demo"
AWS_EXPORT_FOLDER = DEMO_FOLDER / "aws" / "cur2-demo"
GCP_EXPORT_FOLDER = DEMO_FOLDER / "gcp"
RUNS_FILE = DEMO_FOLDER / "runs.yaml"
BUDGETS_FOLDER = DEMO_FOLDER / "budgets"
EVENTS_FOLDER = DEMO_FOLDER / "events"

HOUR = timedelta(hours=1)
DAY = timedelta(days=1)
OCTOBER = date(2026, 10, 1)
NOVEMBER = date(2026, 11, 1)
BILLING_PERIODS = (OCTOBER, NOVEMBER)
MONEY_DECIMALS = 10
GCP_COST_DECIMALS = 6
GIB = 2**30
HOURS_PER_PRICING_MONTH = 730

RUN_7B = "llm-7b-pt-r1"
RUN_13B = "llm-13b-ft-r2"
RUN_3B = "llm-3b-pt-gcp"

# ---------------------------------------------------------------------------------------------
# AWS: export, accounts, prices
# ---------------------------------------------------------------------------------------------
CUR_EXPORT_NAME = "cur2-demo"
CUR_S3_PREFIX = "s3://runledger-demo-billing/cur/cur2-demo"
CUR_EXPORT_ARN = "arn:aws:bcm-data-exports:us-east-1:111122223333:export/cur2-demo-8c1e4f2a-5b7d-4e90-a3c6-1f2e3d4c5b6a"
CUR_DATA_FILES_PER_DELIVERY = 2
PAYER_ACCOUNT_ID = "111122223333"
PAYER_ACCOUNT_NAME = "RunLedger Demo Org"
AWS_LEGAL_ENTITY = "Amazon Web Services, Inc."
AWS_REGION = "us-east-1"
AWS_REPLICA_REGION = "us-west-2"
OCTOBER_INVOICE_ID = "2026110341179"
AWS_DATA_END = datetime(2026, 11, 29)  # the November delivery covers usage up to here


@dataclass(frozen=True)
class CurExecution:
    """One run of the CUR 2.0 export for a billing period: one delivery, one execution folder.

    Attributes:
        period: first day of the billing period.
        executed_at: when the export ran (names the execution folder).
        data_end: usage ending after this is not in the delivery yet.
        invoice_id: `bill_invoice_id`, None while the period is open.
        in_manifest: False for an older execution the manifest no longer lists.
    """

    period: date
    executed_at: datetime
    data_end: datetime
    invoice_id: str | None
    in_manifest: bool


CUR_EXECUTIONS = (
    CurExecution(OCTOBER, datetime(2026, 10, 15, 3, 15), datetime(2026, 10, 14), None, in_manifest=False),
    CurExecution(OCTOBER, datetime(2026, 11, 3, 3, 15), datetime(2026, 11, 1), OCTOBER_INVOICE_ID, in_manifest=True),
    CurExecution(NOVEMBER, datetime(2026, 11, 29, 3, 15), AWS_DATA_END, None, in_manifest=True),
)


@dataclass(frozen=True)
class AwsAccount:
    id: str
    name: str
    environment: str  # the `environment` AWS cost category


TRAINING_ACCOUNT = AwsAccount("444455556666", "ml-training", "production")
DEV_ACCOUNT = AwsAccount("777788889999", "ml-shared-dev", "development")


@dataclass(frozen=True)
class InstanceType:
    name: str
    gpus: int
    vcpus: int
    memory: str
    normalization_factor: float
    on_demand_hourly: float


P5 = InstanceType("p5.48xlarge", 8, 192, "2048 GiB", 384.0, 55.04)
P4D = InstanceType("p4d.24xlarge", 8, 96, "1152 GiB", 192.0, 21.96)
G5_12XLARGE = InstanceType("g5.12xlarge", 4, 48, "192 GiB", 96.0, 5.672)


@dataclass(frozen=True)
class CurProduct:
    """The static part of a kind of CUR line: product, usage type, operation, public price."""

    product_code: str
    usage_type: str | None
    operation: str | None
    family: str | None
    pricing_unit: str | None
    rate: float
    sku: str | None
    description: str
    instance: InstanceType | None = None
    region: str | None = AWS_REGION
    to_region: str | None = None


SAVINGS_PLAN_ARN = "arn:aws:savingsplans::444455556666:savingsplan/5e0b9d43-7a6c-4f1e-9b2d-3c8a1f6e2d70"
SAVINGS_PLAN_OFFERING = "ComputeSavingsPlans"
SAVINGS_PLAN_P5_HOURLY = 36.50
SAVINGS_PLAN_TERM_END = datetime(2026, 10, 11)  # a one-year plan bought for last year's runs
RESERVATION_ARN = "arn:aws:ec2:us-east-1:444455556666:reserved-instances/7c3e9a1b-2f4d-4b8e-a6c5-0d1e2f3a4b5c"
RESERVED_INSTANCES = 4
RESERVATION_UPFRONT_HOURLY = 6.50  # the amortized upfront payment per instance-hour
RESERVATION_RECURRING_HOURLY = 6.42

PRODUCT_NAMES = {
    "AmazonEC2": "Amazon Elastic Compute Cloud",
    "AmazonS3": "Amazon Simple Storage Service",
    "AWSDataTransfer": "AWS Data Transfer",
    "AmazonCloudWatch": "AmazonCloudWatch",
    "AWSGlue": "AWS Glue",
    "AWSSupportBusiness": "AWS Support (Business)",
    "ComputeSavingsPlans": "Savings Plans for AWS Compute usage",
}


def _box_usage(instance: InstanceType, sku: str) -> CurProduct:
    return CurProduct(
        "AmazonEC2",
        f"USE1-BoxUsage:{instance.name}",
        "RunInstances",
        "Compute Instance",
        "Hrs",
        instance.on_demand_hourly,
        sku,
        f"${instance.on_demand_hourly} per On Demand Linux {instance.name} Instance Hour",
        instance,
    )


P5_BOX_USAGE = _box_usage(P5, "B2M3Z6T6KX8V2Q4N")
P4D_BOX_USAGE = _box_usage(P4D, "7Q9UXNH3C2MKB6WR")
G5_BOX_USAGE = _box_usage(G5_12XLARGE, "XQ4T8S3ZK7YF2D9M")
EBS_GP3 = CurProduct(
    "AmazonEC2",
    "USE1-EBS:VolumeUsage.gp3",
    "CreateVolume-Gp3",
    "Storage",
    "GB-Mo",
    0.08,
    "D7EGG5W7JDE4SU4A",
    "$0.08 per GB-month of General Purpose (gp3) provisioned storage - US East (N. Virginia)",
)
S3_STANDARD = CurProduct(
    "AmazonS3",
    "USE1-TimedStorage-ByteHrs",
    "StandardStorage",
    "Storage",
    "GB-Mo",
    0.023,
    "WP9ANXZGBYYSGJEA",
    "$0.023 per GB - first 50 TB / month of storage used",
)
INTER_REGION_TRANSFER = CurProduct(
    "AWSDataTransfer",
    "USE1-USW2-AWS-Out-Bytes",
    "PublicIP-Out",
    "Data Transfer",
    "GB",
    0.02,
    "HQEH3ZNPMHY7UZTD",
    "$0.02 per GB - US East (Northern Virginia) data transfer to US West (Oregon)",
    to_region=AWS_REPLICA_REGION,
)
LOG_INGESTION = CurProduct(
    "AmazonCloudWatch",
    "USE1-DataProcessing-Bytes",
    "PutLogEvents",
    "Data Payload",
    "GB",
    0.50,
    "TFB5V4EJ9BC6PQ2R",
    "$0.50 per GB custom log data ingested",
)
CLOUDWATCH_REQUESTS = CurProduct(
    "AmazonCloudWatch",
    "USE1-CW:Requests",
    "GetMetricData",
    "API Request",
    "Requests",
    0.00001,
    "8JZ5Y9AWUXN6HQ3C",
    "$0.01 per 1,000 metrics requested using GetMetricData API - US East (Northern Virginia)",
)
NAT_GATEWAY_HOURS = CurProduct(
    "AmazonEC2",
    "USE1-NatGateway-Hours",
    "NatGateway",
    "NAT Gateway",
    "Hrs",
    0.045,
    "M2YSHUBETB3JX4M4",
    "$0.045 per NAT Gateway Hour",
)
NAT_GATEWAY_BYTES = CurProduct(
    "AmazonEC2",
    "USE1-NatGateway-Bytes",
    "NatGateway",
    "NAT Gateway",
    "GB",
    0.045,
    "Q9SS9CE4RXPCX5KG",
    "$0.045 per GB Data Processed by NAT Gateways",
)
GLUE_JOB = CurProduct(
    "AWSGlue",
    "USE1-ETL-DPU-Hour",
    "Jobrun",
    "AWS Glue",
    "DPU-Hour",
    0.44,
    "ZQ3NW4K8BDHTC6AF",
    "$0.44 per DPU-Hour for each Apache Spark or Spark Streaming job",
)
SAVINGS_PLAN_FEE = CurProduct(
    "ComputeSavingsPlans",
    "ComputeSP:1yrNoUpfront",
    None,
    "Savings Plan",
    "Hrs",
    0.0,
    "K4FJ8HY2S7ZQDN3W",
    "1 year No Upfront Compute Savings Plan",
    region=None,
)
RESERVED_INSTANCE_FEE = CurProduct(
    "AmazonEC2",
    "USE1-HeavyUsage:p4d.24xlarge",
    "RunInstances",
    "Compute Instance",
    "Hrs",
    0.0,
    "7Q9UXNH3C2MKB6WR",
    f"USD {RESERVATION_RECURRING_HOURLY} hourly fee per Linux/UNIX (Amazon VPC), p4d.24xlarge instance",
    P4D,
)
SUPPORT_FEE = CurProduct(
    "AWSSupportBusiness",
    "Dollar",
    None,
    None,
    None,
    0.0,
    None,
    "AWS Support (Business)",
    region=None,
)
PROMOTIONAL_CREDIT = CurProduct(
    "AmazonEC2",
    None,
    None,
    None,
    None,
    0.0,
    None,
    "AWS Credits: ML research program",
    region=None,
)

SALES_TAX_RATE = 0.0625
SALES_TAX_TYPE = "US Sales Tax"
PROMOTIONAL_CREDIT_AMOUNTS = {OCTOBER: -5000.0, NOVEMBER: -2500.0}
BUSINESS_SUPPORT_TIERS = ((10_000.0, 0.10), (80_000.0, 0.07), (250_000.0, 0.05), (math.inf, 0.03))

# llm-7b-pt-r1 on AWS
RUN_7B_START = datetime(2026, 10, 3)
RUN_7B_END = datetime(2026, 10, 10, 18)
RUN_7B_NODES = 16
RUN_7B_COVERED_NODES = 14  # the Savings Plan commitment covers exactly this many p5 nodes
RUN_7B_NODES_WITH_OWNER_TAG = 6
RUN_7B_CHECKPOINT_GB = 98.0
RUN_7B_CHECKPOINT_EVERY = timedelta(hours=6)
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

# llm-13b-ft-r2 on AWS
RUN_13B_START = datetime(2026, 10, 24)
RUN_13B_END = datetime(2026, 11, 13, 12)
RUN_13B_NODES = 4
RUN_13B_CHECKPOINT_GB = 182.0
RUN_13B_CHECKPOINT_EVERY = timedelta(hours=12)
RUN_13B_CHECKPOINTS_KEPT = 4
RUN_13B_VOLUME_GB = 1000.0
RUN_13B_LOG_GB_PER_NODE_HOUR = (0.05, 0.07)
RUN_13B_BUCKET = "ckpt-13b-ft"

# untagged AWS spend
DEV_INSTANCE_ID = "i-0e7d5c4b3a2910042"
DEV_INSTANCE_FIRST_DAY = datetime(2026, 10, 12)
DEV_WORKDAY_HOURS = (8, 20)
NAT_GATEWAY_ARN = "arn:aws:ec2:us-east-1:444455556666:natgateway/nat-0f1e2d3c4b5a69788"
NAT_GATEWAY_DAILY_GB = (150.0, 400.0)
SHARED_DATASET_BUCKET = "ml-shared-datasets"
SHARED_DATASET_GB = 5200.0
CLOUDWATCH_DAILY_REQUESTS = (800_000, 1_200_000)

CUR_COLUMNS: tuple[tuple[str, pa.DataType], ...] = (
    ("bill_bill_type", pa.string()),
    ("bill_billing_entity", pa.string()),
    ("bill_billing_period_start_date", pa.timestamp("us")),
    ("bill_billing_period_end_date", pa.timestamp("us")),
    ("bill_invoice_id", pa.string()),
    ("bill_invoicing_entity", pa.string()),
    ("bill_payer_account_id", pa.string()),
    ("bill_payer_account_name", pa.string()),
    ("cost_category", pa.map_(pa.string(), pa.string())),
    ("discount", pa.map_(pa.string(), pa.float64())),
    ("identity_line_item_id", pa.string()),
    ("identity_time_interval", pa.string()),
    ("line_item_availability_zone", pa.string()),
    ("line_item_blended_cost", pa.float64()),
    ("line_item_blended_rate", pa.string()),
    ("line_item_currency_code", pa.string()),
    ("line_item_legal_entity", pa.string()),
    ("line_item_line_item_description", pa.string()),
    ("line_item_line_item_type", pa.string()),
    ("line_item_net_unblended_cost", pa.float64()),
    ("line_item_net_unblended_rate", pa.string()),
    ("line_item_normalization_factor", pa.float64()),
    ("line_item_normalized_usage_amount", pa.float64()),
    ("line_item_operation", pa.string()),
    ("line_item_product_code", pa.string()),
    ("line_item_resource_id", pa.string()),
    ("line_item_tax_type", pa.string()),
    ("line_item_unblended_cost", pa.float64()),
    ("line_item_unblended_rate", pa.string()),
    ("line_item_usage_account_id", pa.string()),
    ("line_item_usage_account_name", pa.string()),
    ("line_item_usage_amount", pa.float64()),
    ("line_item_usage_end_date", pa.timestamp("us")),
    ("line_item_usage_start_date", pa.timestamp("us")),
    ("line_item_usage_type", pa.string()),
    ("pricing_currency", pa.string()),
    ("pricing_public_on_demand_cost", pa.float64()),
    ("pricing_public_on_demand_rate", pa.string()),
    ("pricing_term", pa.string()),
    ("pricing_unit", pa.string()),
    ("product", pa.map_(pa.string(), pa.string())),
    ("product_from_region_code", pa.string()),
    ("product_instance_type", pa.string()),
    ("product_product_family", pa.string()),
    ("product_region_code", pa.string()),
    ("product_servicecode", pa.string()),
    ("product_sku", pa.string()),
    ("product_to_region_code", pa.string()),
    ("reservation_amortized_upfront_fee_for_billing_period", pa.float64()),
    ("reservation_effective_cost", pa.float64()),
    ("reservation_reservation_a_r_n", pa.string()),
    ("reservation_unused_amortized_upfront_fee_for_billing_period", pa.float64()),
    ("reservation_unused_recurring_fee", pa.float64()),
    ("resource_tags", pa.map_(pa.string(), pa.string())),
    ("savings_plan_savings_plan_a_r_n", pa.string()),
    ("savings_plan_savings_plan_effective_cost", pa.float64()),
    ("savings_plan_total_commitment_to_date", pa.float64()),
    ("savings_plan_used_commitment", pa.float64()),
    ("savings_plan_offering_type", pa.string()),
)
CUR_SCHEMA = pa.schema(CUR_COLUMNS)
MANIFEST_TYPE_NAMES = {
    pa.string(): "string",
    pa.float64(): "double",
    pa.timestamp("us"): "timestamp",
    pa.map_(pa.string(), pa.string()): "map<string,string>",
    pa.map_(pa.string(), pa.float64()): "map<string,double>",
}

# ---------------------------------------------------------------------------------------------
# GCP: billing account, projects, SKUs
# ---------------------------------------------------------------------------------------------
GCP_BILLING_ACCOUNT = "01A2B3-C4D5E6-F7A8B9"
GCP_EXPORT_FILE_PREFIX = "gcp_billing_export_resource_v1_01A2B3_C4D5E6_F7A8B9"
GCP_DATA_END = datetime(2026, 11, 29)
GCP_EXPORT_LAG_HOURS = (2.0, 9.0)
GCP_COST_AS_TEXT_EVERY = 3  # JSON exports write some numbers as strings: every third row's cost
PACIFIC_DAYLIGHT_TIME_ENDS = datetime(2026, 11, 1, 9)  # UTC; invoice months follow Pacific time
PACIFIC_DAYLIGHT_OFFSET = timedelta(hours=-7)
PACIFIC_STANDARD_OFFSET = timedelta(hours=-8)
GCP_SALES_TAX_RATE = 0.0625
GCP_TAX_EXPORT_TIMES = {
    OCTOBER: datetime(2026, 11, 1, 10, 4, 12, 331907),
    NOVEMBER: datetime(2026, 11, 29, 9, 58, 40, 120554),
}
GCP_ORGANIZATION_NUMBER = "739204815563"

COMPUTE_ENGINE = {"id": "6F81-5844-456A", "description": "Compute Engine"}
CLOUD_STORAGE = {"id": "95FF-2EF5-5EA1", "description": "Cloud Storage"}
NETWORKING = {"id": "E505-1604-58F8", "description": "Networking"}
CLOUD_LOGGING = {"id": "5490-F7B7-8DF6", "description": "Cloud Logging"}
INVOICE_SERVICE = {"id": "B1C4-83A9-2F6E", "description": "Invoice"}


@dataclass(frozen=True)
class GcpSku:
    """A GCP SKU with its list price per pricing unit and how usage converts to that unit."""

    service: dict[str, str]
    id: str
    description: str
    price: float
    usage_unit: str
    pricing_unit: str
    usage_per_pricing_unit: float


H100_GPU = GcpSku(
    COMPUTE_ENGINE,
    "9A2B-73C1-4E5D",
    "Nvidia H100 80GB GPU running in Americas",
    9.7965,
    "seconds",
    "hour",
    3600,
)
A3_CORE = GcpSku(
    COMPUTE_ENGINE,
    "3C8E-91F4-A6B2",
    "A3 Instance Core running in Americas",
    0.0295,
    "seconds",
    "hour",
    3600,
)
A3_RAM = GcpSku(
    COMPUTE_ENGINE,
    "5D1A-2E7F-B803",
    "A3 Instance Ram running in Americas",
    0.003,
    "byte-seconds",
    "gibibyte hour",
    GIB * 3600,
)
N2_CORE = GcpSku(
    COMPUTE_ENGINE,
    "BB77-5FDA-4A4D",
    "N2 Instance Core running in Americas",
    0.031611,
    "seconds",
    "hour",
    3600,
)
N2_RAM = GcpSku(
    COMPUTE_ENGINE,
    "7C19-20B5-E9F3",
    "N2 Instance Ram running in Americas",
    0.004237,
    "byte-seconds",
    "gibibyte hour",
    GIB * 3600,
)
STANDARD_STORAGE = GcpSku(
    CLOUD_STORAGE,
    "0D5D-6E23-4250",
    "Standard Storage US Multi-region",
    0.026,
    "byte-seconds",
    "gibibyte month",
    GIB * HOURS_PER_PRICING_MONTH * 3600,
)
EGRESS_TO_EMEA = GcpSku(
    NETWORKING,
    "9DE9-9092-B3BC",
    "Network Inter Region Data Transfer Out from Americas to EMEA",
    0.05,
    "bytes",
    "gibibyte",
    GIB,
)
LOG_VOLUME = GcpSku(CLOUD_LOGGING, "143F-A1B0-E0BE", "Log Volume", 0.50, "bytes", "gibibyte", GIB)
SALES_TAX = GcpSku(INVOICE_SERVICE, "B1C4-83A9-0001", "Sales tax", 0.0, "", "", 1)


@dataclass(frozen=True)
class GcpProject:
    id: str
    number: str
    labels: tuple[tuple[str, str], ...]


TRAIN_PROJECT = GcpProject("ml-train-prod", "482910375566", (("team", "ml-platform"), ("experiment", "scaling-3b")))
SANDBOX_PROJECT = GcpProject("ml-sandbox", "120938475610", (("team", "ml-platform"),))
GCP_ZONE = "us-central1-a"


@dataclass(frozen=True)
class GcpMachine:
    machine_type: str
    vcpus: int
    memory_gib: int
    gpus: int
    core_sku: GcpSku
    ram_sku: GcpSku
    gpu_sku: GcpSku | None = None


A3_HIGHGPU_8G = GcpMachine("a3-highgpu-8g", 208, 1872, 8, A3_CORE, A3_RAM, H100_GPU)
N2_STANDARD_16 = GcpMachine("n2-standard-16", 16, 64, 0, N2_CORE, N2_RAM)

# llm-3b-pt-gcp on GCP
RUN_3B_START = datetime(2026, 10, 27)
RUN_3B_END = datetime(2026, 11, 3, 12)
RUN_3B_VMS = 4
RUN_3B_VM_ID_BASE = 7234001
RUN_3B_COMMITTED_USE_DISCOUNT = 0.37
RUN_3B_COMMITMENT_ID = "projects/482910375566/regions/us-central1/commitments/a3-h100-1yr"
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

# untagged GCP spend
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

# ---------------------------------------------------------------------------------------------
# Run registry, budgets and the config file
# ---------------------------------------------------------------------------------------------
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
        "storage": {"checkpoint_gb": 98, "checkpoints_retained": 5, "dataset_gb": 4000, "price_gb_month": 0.023},
        "network": {"egress_gb": 2000, "price_gb": 0.02},
        "fixed": {"data": 800, "monitoring": 400},
        "thresholds": {"warning": 0.8, "over": 1.0},
    },
    RUN_13B: {
        "training_run": RUN_13B,
        "currency": "USD",
        "window": {"start": date(2026, 10, 20), "end": date(2026, 11, 20)},
        "model": {
            "parameters": 1.3e10,
            "tokens": 1.0e11,
            "gpu_peak_tflops": 312,
            "mfu": 0.38,
            "overhead": 0.10,
            "gpus": 32,
            "gpu_hour_price": (RESERVATION_UPFRONT_HOURLY + RESERVATION_RECURRING_HOURLY) / P4D.gpus,
        },
        "storage": {"checkpoint_gb": 182, "checkpoints_retained": 4, "dataset_gb": 300, "price_gb_month": 0.023},
        "network": {"egress_gb": 0, "price_gb": 0.02},
        "fixed": {"monitoring": 200},
        "thresholds": {"warning": 0.8, "over": 1.0},
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
        "thresholds": {"warning": 0.8, "over": 1.0},
    },
}
CONFIG = {
    "warehouse": ".runledger/warehouse.duckdb",
    "reports_dir": ".runledger/reports",
    "sources": [
        {"name": "aws-main", "kind": "aws_cur", "uri": AWS_EXPORT_FOLDER.as_posix()},
        {"name": "gcp-main", "kind": "gcp_billing", "path": GCP_EXPORT_FOLDER.as_posix()},
        {"name": "run-events", "kind": "run_events", "path": EVENTS_FOLDER.as_posix()},
    ],
    "attribution": {
        "dimensions": {
            "training_run": ["training_run", "training-run", "TrainingRun", "run_id"],
            "experiment": ["experiment"],
            "dataset_version": ["dataset_version", "dataset"],
            "owner": ["owner", "team"],
        },
        "runs": RUNS_FILE.as_posix(),
    },
    "budgets": BUDGETS_FOLDER.as_posix(),
}
CONFIG_HEADER = "# RunLedger demo project, written by `runledger demo`: paths are relative to this file.\n"


# ---------------------------------------------------------------------------------------------
# Entry point
# ---------------------------------------------------------------------------------------------
def write_demo(root: Path) -> Path:
    """Writes the demo project under `root`: config, exports, run registry and budgets.

    Args:
        root: the project folder; created if needed. Data goes under `root/.runledger/demo/`,
            only `runledger.yaml` sits in `root` itself. Existing demo files are overwritten.

    Returns:
        The path of `root/runledger.yaml`.

    Raises:
        ConfigError: `root/runledger.yaml` exists and was not written by the demo.
    """
    config_path = root / CONFIG_FILE_NAME
    if config_path.exists() and not config_path.read_text().startswith(CONFIG_HEADER):
        raise ConfigError(f"{config_path} exists and is not the demo's; choose another folder with --dir")
    rng = random.Random(SEED)
    _write_cur_export(root / AWS_EXPORT_FOLDER, _aws_usage_lines(rng), rng)
    _write_gcp_export(root / GCP_EXPORT_FOLDER, _gcp_rows(rng))
    _write_yaml(root / RUNS_FILE, {"runs": list(RUN_REGISTRY)})
    for run, budget in BUDGETS.items():
        _write_yaml(root / BUDGETS_FOLDER / f"{run}.yaml", budget)
    for run, events in (
        (RUN_7B, _llm_7b_events()),
        (
            RUN_3B,
            _clean_run_events(
                RUN_3B,
                RUN_3B_START,
                RUN_3B_END,
                RUN_3B_CHECKPOINT_EVERY,
                RUN_3B_GPUS,
                RUN_3B_STEPS_PER_HOUR,
                RUN_3B_CONFIG_HASH,
            ),
        ),
    ):
        _write_json_lines(root / EVENTS_FOLDER / f"{run}.jsonl", events)
    _write_yaml(config_path, CONFIG, header=CONFIG_HEADER)
    return config_path


# ---------------------------------------------------------------------------------------------
# Calendar helpers
# ---------------------------------------------------------------------------------------------
def _start_of(period: date) -> datetime:
    return datetime(period.year, period.month, 1)


def _month_after(period: date) -> date:
    return date(period.year + period.month // 12, period.month % 12 + 1, 1)


def _month_of(moment: datetime) -> date:
    return date(moment.year, moment.month, 1)


def _hours_in_month(moment: datetime) -> float:
    period = _month_of(moment)
    return (_start_of(_month_after(period)) - _start_of(period)) / HOUR


def _hours(start: datetime, end: datetime) -> Iterator[datetime]:
    moment = start
    while moment < end:
        yield moment
        moment += HOUR


def _day_slices(start: datetime, end: datetime) -> Iterator[tuple[datetime, datetime]]:
    """[start, end) cut at midnights: full days inside, partial days at the edges."""
    day = datetime(start.year, start.month, start.day)
    while day < end:
        yield max(day, start), min(day + DAY, end)
        day += DAY


def _workday_hours(first_day: datetime, end: datetime, hours: tuple[int, int]) -> Iterator[datetime]:
    """Every hour from `hours[0]` to `hours[1]` on Monday to Friday."""
    for day, _ in _day_slices(first_day, end):
        if day.weekday() < 5:
            yield from _hours(day.replace(hour=hours[0]), min(day.replace(hour=hours[1]), end))


def _gb_months(gb: float, start: datetime, end: datetime) -> float:
    """Storage over [start, end) in GB-months of that month, as AWS meters TimedStorage."""
    return gb * ((end - start) / HOUR) / _hours_in_month(start)


def _checkpoints_saved(run_start: datetime, run_end: datetime, every: timedelta, moment: datetime) -> int:
    return math.floor((min(moment, run_end) - run_start) / every) if moment > run_start else 0


def _money(amount: float) -> float:
    return round(amount, MONEY_DECIMALS)


def _rate_text(rate: float) -> str:
    return repr(round(rate, MONEY_DECIMALS))


# ---------------------------------------------------------------------------------------------
# AWS CUR 2.0 line items
# ---------------------------------------------------------------------------------------------
def _cur_line(
    product: CurProduct,
    line_type: str,
    account: AwsAccount,
    start: datetime,
    end: datetime,
    amount: float,
    *,
    resource_id: str | None = None,
    tags: dict[str, str] | None = None,
    **overrides: object,
) -> dict:
    """One CUR line priced at the product's public on-demand rate; `overrides` set other columns."""
    cost = _money(amount * product.rate)
    instance = product.instance
    line = {
        "cost_category": {"environment": account.environment},
        "discount": {},
        "line_item_availability_zone": f"{AWS_REGION}a" if instance else None,
        "line_item_blended_cost": cost,
        "line_item_blended_rate": _rate_text(product.rate),
        "line_item_currency_code": "USD",
        "line_item_legal_entity": AWS_LEGAL_ENTITY,
        "line_item_line_item_description": product.description,
        "line_item_line_item_type": line_type,
        "line_item_net_unblended_cost": None,
        "line_item_net_unblended_rate": None,
        "line_item_normalization_factor": instance.normalization_factor if instance else 0.0,
        "line_item_normalized_usage_amount": _money(amount * instance.normalization_factor) if instance else 0.0,
        "line_item_operation": product.operation,
        "line_item_product_code": product.product_code,
        "line_item_resource_id": resource_id,
        "line_item_tax_type": None,
        "line_item_unblended_cost": cost,
        "line_item_unblended_rate": _rate_text(product.rate),
        "line_item_usage_account_id": account.id,
        "line_item_usage_account_name": account.name,
        "line_item_usage_amount": _money(amount),
        "line_item_usage_end_date": end,
        "line_item_usage_start_date": start,
        "line_item_usage_type": product.usage_type,
        "pricing_currency": "USD",
        "pricing_public_on_demand_cost": cost,
        "pricing_public_on_demand_rate": _rate_text(product.rate),
        "pricing_term": "OnDemand" if product.rate else None,
        "pricing_unit": product.pricing_unit,
        "product": _product_map(product),
        "product_from_region_code": product.region if product.to_region else None,
        "product_instance_type": instance.name if instance else None,
        "product_product_family": product.family,
        "product_region_code": product.region,
        "product_servicecode": product.product_code,
        "product_sku": product.sku,
        "product_to_region_code": product.to_region,
        "reservation_amortized_upfront_fee_for_billing_period": 0.0,
        "reservation_effective_cost": 0.0,
        "reservation_reservation_a_r_n": None,
        "reservation_unused_amortized_upfront_fee_for_billing_period": 0.0,
        "reservation_unused_recurring_fee": 0.0,
        "resource_tags": dict(tags or {}),
        "savings_plan_savings_plan_a_r_n": None,
        "savings_plan_savings_plan_effective_cost": 0.0,
        "savings_plan_total_commitment_to_date": 0.0,
        "savings_plan_used_commitment": 0.0,
        "savings_plan_offering_type": None,
    }
    line.update(overrides)
    return line


def _product_map(product: CurProduct) -> dict[str, str]:
    """The `product` map: attributes without a fixed `product_*` column."""
    name = PRODUCT_NAMES[product.product_code]
    attributes = {"product_name": name, "servicename": name}
    if product.region:
        attributes["region"] = product.region
    if product.instance:
        attributes |= {
            "instance_type_family": product.instance.name.split(".")[0],
            "instance_family": "GPU instance" if product.instance.gpus else "General purpose",
            "gpu": str(product.instance.gpus),
            "vcpu": str(product.instance.vcpus),
            "memory": product.instance.memory,
            "operating_system": "Linux",
            "tenancy": "Shared",
        }
    if product.to_region:
        attributes["transfer_type"] = "InterRegion Outbound"
    return attributes


def _savings_plan_covered(on_demand: dict) -> list[dict]:
    """An on-demand instance-hour as Savings-Plan-covered usage plus its negation."""
    hours = on_demand["line_item_usage_amount"]
    list_cost = on_demand["line_item_unblended_cost"]
    plan = {"savings_plan_savings_plan_a_r_n": SAVINGS_PLAN_ARN, "savings_plan_offering_type": SAVINGS_PLAN_OFFERING}
    covered = (
        on_demand
        | plan
        | {
            "line_item_line_item_type": "SavingsPlanCoveredUsage",
            "savings_plan_savings_plan_effective_cost": _money(hours * SAVINGS_PLAN_P5_HOURLY),
        }
    )
    negative_rate = _rate_text(-float(on_demand["line_item_unblended_rate"]))
    negation = (
        on_demand
        | plan
        | {
            "line_item_line_item_type": "SavingsPlanNegation",
            "line_item_line_item_description": (
                f"SavingsPlanNegation used by AccountId : {on_demand['line_item_usage_account_id']} "
                f"and UsageSku : {on_demand['product_sku']}"
            ),
            "line_item_unblended_cost": -list_cost,
            "line_item_blended_cost": -list_cost,
            "line_item_unblended_rate": negative_rate,
            "line_item_blended_rate": negative_rate,
            "pricing_public_on_demand_cost": 0.0,
            "pricing_public_on_demand_rate": "0.0",
        }
    )
    return [covered, negation]


def _reserved_instance_usage(on_demand: dict) -> dict:
    """An on-demand instance-hour as DiscountedUsage of the p4d reservation."""
    hours = on_demand["line_item_usage_amount"]
    return on_demand | {
        "line_item_line_item_type": "DiscountedUsage",
        "line_item_line_item_description": (
            "USD 0.0 per Linux/UNIX (Amazon VPC), p4d.24xlarge reserved instance applied"
        ),
        "line_item_unblended_cost": 0.0,
        "line_item_blended_cost": 0.0,
        "line_item_unblended_rate": "0.0",
        "line_item_blended_rate": "0.0",
        "pricing_term": "Reserved",
        "reservation_reservation_a_r_n": RESERVATION_ARN,
        "reservation_effective_cost": _money(hours * (RESERVATION_UPFRONT_HOURLY + RESERVATION_RECURRING_HOURLY)),
    }


def _aws_usage_lines(rng: random.Random) -> list[dict]:
    """Every usage line of both periods up to AWS_DATA_END, before fees, credits and tax."""
    return (
        _llm_7b_lines(rng)
        + _llm_13b_lines(rng)
        + _dev_instance_lines()
        + _nat_gateway_lines(rng)
        + _shared_bucket_lines()
        + _cloudwatch_request_lines(rng)
    )


def _llm_7b_tags(node: int) -> dict[str, str]:
    """Tags of the 7B nodes: the last two were launched by hand without any."""
    if node > RUN_7B_COVERED_NODES:
        return {}
    tags = {
        "user_training_run": RUN_7B,
        "user_experiment": "scaling-7b",
        "aws_created_by": "AssumedRole:AROA4XKQ7EXAMPLE7B:alice-launcher",
    }
    if node <= RUN_7B_NODES_WITH_OWNER_TAG:
        tags["user_owner"] = "alice"
    return tags


def _llm_7b_instance_id(node: int) -> str:
    return f"i-0a1b2c3d4e5f6{node:04d}"


def _llm_7b_lines(rng: random.Random) -> list[dict]:
    lines = _llm_7b_tokenize_lines()
    for hour in _hours(RUN_7B_START, RUN_7B_END):
        for node in range(1, RUN_7B_NODES + 1):
            on_demand = _cur_line(
                P5_BOX_USAGE,
                "Usage",
                TRAINING_ACCOUNT,
                hour,
                hour + HOUR,
                1.0,
                resource_id=_llm_7b_instance_id(node),
                tags=_llm_7b_tags(node),
            )
            lines += _savings_plan_covered(on_demand) if node <= RUN_7B_COVERED_NODES else [on_demand]
    for start, end in _day_slices(RUN_7B_START, RUN_7B_END):
        for node in range(1, RUN_7B_NODES + 1):
            volume_gb_months = _gb_months(RUN_7B_VOLUME_GB, start, end)
            lines.append(
                _cur_line(
                    EBS_GP3,
                    "Usage",
                    TRAINING_ACCOUNT,
                    start,
                    end,
                    volume_gb_months,
                    resource_id=f"vol-0a1b2c3d4e5f6{node:04d}",
                    tags=_llm_7b_tags(node),
                )
            )
        saved_that_day = _checkpoints_saved(
            RUN_7B_START, RUN_7B_END, RUN_7B_CHECKPOINT_EVERY, end
        ) - _checkpoints_saved(RUN_7B_START, RUN_7B_END, RUN_7B_CHECKPOINT_EVERY, start)
        replicated_gb = saved_that_day * RUN_7B_CHECKPOINT_GB * rng.uniform(1.0, 1.04)
        lines.append(
            _cur_line(
                INTER_REGION_TRANSFER,
                "Usage",
                TRAINING_ACCOUNT,
                start,
                end,
                replicated_gb,
                resource_id=_llm_7b_instance_id(1),
                tags=_llm_7b_tags(1),
            )
        )
        node_hours = RUN_7B_NODES * (end - start) / HOUR
        lines.append(
            _cur_line(
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
    for start, end in _day_slices(RUN_7B_START, AWS_DATA_END):
        checkpoints = _checkpoints_saved(RUN_7B_START, RUN_7B_END, RUN_7B_CHECKPOINT_EVERY, end)
        if start >= RUN_7B_CHECKPOINT_CLEANUP:
            checkpoints = RUN_7B_CHECKPOINTS_KEPT_AFTER_CLEANUP
        lines.append(
            _cur_line(
                S3_STANDARD,
                "Usage",
                TRAINING_ACCOUNT,
                start,
                end,
                _gb_months(checkpoints * RUN_7B_CHECKPOINT_GB, start, end),
                resource_id=RUN_7B_BUCKET,
            )
        )
    return lines


def _llm_7b_tokenize_lines() -> list[dict]:
    """The Glue job that tokenized the 7B data set before the run."""
    tags = {"user_training_run": RUN_7B, "user_dataset_version": "fineweb-edu-v3.2"}
    return [
        _cur_line(
            GLUE_JOB,
            "Usage",
            TRAINING_ACCOUNT,
            hour,
            hour + HOUR,
            RUN_7B_TOKENIZE_DPUS,
            resource_id=RUN_7B_TOKENIZE_JOB,
            tags=tags,
        )
        for hour in _hours(RUN_7B_TOKENIZE_START, RUN_7B_TOKENIZE_END)
    ]


def _llm_13b_tags(node: int) -> dict[str, str]:
    """Two tagging conventions on the 13B nodes: `training_run`/`owner`, and `run_id`/`team`."""
    if node <= RUN_13B_NODES // 2:
        return {"user_training_run": RUN_13B, "user_owner": "bob", "user_dataset": "sft-mix-v7"}
    return {"user_run_id": RUN_13B, "user_team": "bob", "user_experiment": "ft-13b-chat"}


def _llm_13b_lines(rng: random.Random) -> list[dict]:
    lines = []
    for hour in _hours(RUN_13B_START, RUN_13B_END):
        for node in range(1, RUN_13B_NODES + 1):
            on_demand = _cur_line(
                P4D_BOX_USAGE,
                "Usage",
                TRAINING_ACCOUNT,
                hour,
                hour + HOUR,
                1.0,
                resource_id=f"i-0b13f5e6d7c8a{node:04d}",
                tags=_llm_13b_tags(node),
            )
            lines.append(_reserved_instance_usage(on_demand))
    for start, end in _day_slices(RUN_13B_START, RUN_13B_END):
        for node in range(1, RUN_13B_NODES + 1):
            volume_gb_months = _gb_months(RUN_13B_VOLUME_GB, start, end)
            lines.append(
                _cur_line(
                    EBS_GP3,
                    "Usage",
                    TRAINING_ACCOUNT,
                    start,
                    end,
                    volume_gb_months,
                    resource_id=f"vol-0b13f5e6d7c8a{node:04d}",
                    tags=_llm_13b_tags(node),
                )
            )
        node_hours = RUN_13B_NODES * (end - start) / HOUR
        lines.append(
            _cur_line(
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
    for start, end in _day_slices(RUN_13B_START, AWS_DATA_END):
        saved = _checkpoints_saved(RUN_13B_START, RUN_13B_END, RUN_13B_CHECKPOINT_EVERY, end)
        stored_gb = min(saved, RUN_13B_CHECKPOINTS_KEPT) * RUN_13B_CHECKPOINT_GB
        lines.append(
            _cur_line(
                S3_STANDARD,
                "Usage",
                TRAINING_ACCOUNT,
                start,
                end,
                _gb_months(stored_gb, start, end),
                resource_id=RUN_13B_BUCKET,
                tags={"user_run_id": RUN_13B},
            )
        )
    return lines


def _dev_instance_lines() -> list[dict]:
    """A shared g5 dev box, weekdays only, tagged by nobody but AWS itself."""
    tags = {"aws_created_by": "IAMUser:AIDA6ODU5EXAMPLEDEV:dave"}
    return [
        _cur_line(G5_BOX_USAGE, "Usage", DEV_ACCOUNT, hour, hour + HOUR, 1.0, resource_id=DEV_INSTANCE_ID, tags=tags)
        for hour in _workday_hours(DEV_INSTANCE_FIRST_DAY, AWS_DATA_END, DEV_WORKDAY_HOURS)
    ]


def _nat_gateway_lines(rng: random.Random) -> list[dict]:
    lines = []
    for start, end in _day_slices(_start_of(OCTOBER), AWS_DATA_END):
        hours = (end - start) / HOUR
        lines.append(
            _cur_line(NAT_GATEWAY_HOURS, "Usage", TRAINING_ACCOUNT, start, end, hours, resource_id=NAT_GATEWAY_ARN)
        )
        lines.append(
            _cur_line(
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
        _cur_line(
            S3_STANDARD,
            "Usage",
            TRAINING_ACCOUNT,
            start,
            end,
            _gb_months(SHARED_DATASET_GB, start, end),
            resource_id=SHARED_DATASET_BUCKET,
        )
        for start, end in _day_slices(_start_of(OCTOBER), AWS_DATA_END)
    ]


def _cloudwatch_request_lines(rng: random.Random) -> list[dict]:
    return [
        _cur_line(CLOUDWATCH_REQUESTS, "Usage", TRAINING_ACCOUNT, start, end, rng.randint(*CLOUDWATCH_DAILY_REQUESTS))
        for start, end in _day_slices(_start_of(OCTOBER), AWS_DATA_END)
    ]


# ---------------------------------------------------------------------------------------------
# AWS period-level lines: commitments, credit, support, tax
# ---------------------------------------------------------------------------------------------
def _savings_plan_fees(usage: list[dict], start: datetime, end: datetime) -> list[dict]:
    """One SavingsPlanRecurringFee per hour of the plan's term in [start, end)."""
    commitment = RUN_7B_COVERED_NODES * SAVINGS_PLAN_P5_HOURLY
    used = defaultdict(float)
    for line in usage:
        if line["line_item_line_item_type"] == "SavingsPlanCoveredUsage":
            used[line["line_item_usage_start_date"]] += line["savings_plan_savings_plan_effective_cost"]
    return [
        _cur_line(
            SAVINGS_PLAN_FEE,
            "SavingsPlanRecurringFee",
            TRAINING_ACCOUNT,
            hour,
            hour + HOUR,
            1.0,
            resource_id=SAVINGS_PLAN_ARN,
            line_item_unblended_cost=commitment,
            line_item_blended_cost=commitment,
            line_item_unblended_rate=_rate_text(commitment),
            line_item_blended_rate=_rate_text(commitment),
            pricing_public_on_demand_cost=0.0,
            savings_plan_savings_plan_a_r_n=SAVINGS_PLAN_ARN,
            savings_plan_offering_type=SAVINGS_PLAN_OFFERING,
            savings_plan_total_commitment_to_date=commitment,
            savings_plan_used_commitment=_money(used[hour]),
        )
        for hour in _hours(start, min(end, SAVINGS_PLAN_TERM_END))
    ]


def _reserved_instance_fee(usage: list[dict], period: date) -> dict:
    """The month's RIFee: the recurring fee for every reserved hour, and the unused share of it."""
    start, end = _start_of(period), _start_of(_month_after(period))
    reserved_hours = RESERVED_INSTANCES * (end - start) / HOUR
    used_hours = sum(
        line["line_item_usage_amount"]
        for line in usage
        if line["line_item_line_item_type"] == "DiscountedUsage"
        and line["reservation_reservation_a_r_n"] == RESERVATION_ARN
    )
    unused_hours = reserved_hours - used_hours
    recurring = _money(reserved_hours * RESERVATION_RECURRING_HOURLY)
    return _cur_line(
        RESERVED_INSTANCE_FEE,
        "RIFee",
        TRAINING_ACCOUNT,
        start,
        end,
        reserved_hours,
        line_item_unblended_cost=recurring,
        line_item_blended_cost=recurring,
        line_item_unblended_rate=_rate_text(RESERVATION_RECURRING_HOURLY),
        line_item_blended_rate=_rate_text(RESERVATION_RECURRING_HOURLY),
        line_item_normalized_usage_amount=0.0,
        line_item_availability_zone=None,
        pricing_public_on_demand_cost=0.0,
        pricing_public_on_demand_rate="0.0",
        pricing_term="Reserved",
        reservation_reservation_a_r_n=RESERVATION_ARN,
        reservation_amortized_upfront_fee_for_billing_period=_money(reserved_hours * RESERVATION_UPFRONT_HOURLY),
        reservation_unused_amortized_upfront_fee_for_billing_period=_money(unused_hours * RESERVATION_UPFRONT_HOURLY),
        reservation_unused_recurring_fee=_money(unused_hours * RESERVATION_RECURRING_HOURLY),
    )


def _period_charge(product: CurProduct, line_type: str, period: date, amount: float, **overrides: object) -> dict:
    """A line spanning the whole billing period, with no usage rate (credit, support, tax)."""
    start, end = _start_of(period), _start_of(_month_after(period))
    return _cur_line(
        product,
        line_type,
        TRAINING_ACCOUNT,
        start,
        end,
        1.0,
        line_item_unblended_cost=amount,
        line_item_blended_cost=amount,
        line_item_unblended_rate=None,
        line_item_blended_rate=None,
        pricing_public_on_demand_rate=None,
        pricing_public_on_demand_cost=0.0,
        **overrides,
    )


def _business_support_fee(charges: float) -> float:
    """AWS Business Support: a falling percentage of the month's charges, tier by tier."""
    fee, lower = 0.0, 0.0
    for upper, rate in BUSINESS_SUPPORT_TIERS:
        fee += max(0.0, min(charges, upper) - lower) * rate
        lower = upper
    return round(fee, 2)


def _tax_lines(lines: list[dict], period: date) -> list[dict]:
    """Sales tax per usage account and product code, on that pair's charges."""
    taxable = defaultdict(float)
    for line in lines:
        key = (line["line_item_usage_account_id"], line["line_item_product_code"])
        taxable[key] += line["line_item_unblended_cost"]
    accounts = {TRAINING_ACCOUNT.id: TRAINING_ACCOUNT, DEV_ACCOUNT.id: DEV_ACCOUNT}
    taxes = []
    for (account_id, product_code), amount in sorted(taxable.items()):
        tax = round(amount * SALES_TAX_RATE, 2)
        if tax <= 0:
            continue
        product = CurProduct(
            product_code, None, None, None, None, 0.0, None, f"Tax for product code {product_code}", region=None
        )
        account = accounts[account_id]
        taxes.append(
            _period_charge(
                product,
                "Tax",
                period,
                tax,
                line_item_tax_type=SALES_TAX_TYPE,
                line_item_usage_account_id=account.id,
                line_item_usage_account_name=account.name,
                cost_category={"environment": account.environment},
            )
        )
    return taxes


def _cur_snapshot(delivery: CurExecution, usage_lines: list[dict]) -> list[dict]:
    """Every line of one delivery: the period's usage so far plus its fees, credit and tax."""
    period_start = _start_of(delivery.period)
    cutoff = min(_start_of(_month_after(delivery.period)), delivery.data_end)
    usage = [
        line
        for line in usage_lines
        if line["line_item_usage_start_date"] >= period_start and line["line_item_usage_end_date"] <= cutoff
    ]
    charges = usage + _savings_plan_fees(usage, period_start, cutoff) + [_reserved_instance_fee(usage, delivery.period)]
    support = _business_support_fee(sum(line["line_item_unblended_cost"] for line in charges))
    charges.append(_period_charge(SUPPORT_FEE, "Fee", delivery.period, support))
    lines = charges + _tax_lines(charges, delivery.period)
    credit = PROMOTIONAL_CREDIT_AMOUNTS[delivery.period]
    lines.append(_period_charge(PROMOTIONAL_CREDIT, "Credit", delivery.period, credit))
    lines.sort(key=lambda line: line["line_item_usage_start_date"])
    return [_with_bill_columns(_with_identity(line), delivery) for line in lines]


def _with_identity(line: dict) -> dict:
    """identity_*: a line id stable across deliveries and hours, unique with the time interval."""
    key = "|".join(
        str(line[column])
        for column in (
            "line_item_usage_account_id",
            "line_item_line_item_type",
            "line_item_product_code",
            "line_item_usage_type",
            "line_item_operation",
            "line_item_resource_id",
            "line_item_line_item_description",
        )
    )
    digest = base64.b32encode(hashlib.sha256(key.encode()).digest()).decode().lower().rstrip("=")
    start, end = line["line_item_usage_start_date"], line["line_item_usage_end_date"]
    return line | {
        "identity_line_item_id": digest[:52],
        "identity_time_interval": f"{start:%Y-%m-%dT%H:%M:%SZ}/{end:%Y-%m-%dT%H:%M:%SZ}",
    }


def _with_bill_columns(line: dict, delivery: CurExecution) -> dict:
    return line | {
        "bill_bill_type": "Anniversary",
        "bill_billing_entity": "AWS",
        "bill_billing_period_start_date": _start_of(delivery.period),
        "bill_billing_period_end_date": _start_of(_month_after(delivery.period)),
        "bill_invoice_id": delivery.invoice_id,
        "bill_invoicing_entity": AWS_LEGAL_ENTITY,
        "bill_payer_account_id": PAYER_ACCOUNT_ID,
        "bill_payer_account_name": PAYER_ACCOUNT_NAME,
    }


# ---------------------------------------------------------------------------------------------
# AWS export files
# ---------------------------------------------------------------------------------------------
def _write_cur_export(export_root: Path, usage_lines: list[dict], rng: random.Random) -> None:
    """Every delivery's data files; a manifest for each period's latest delivery."""
    for delivery in CUR_EXECUTIONS:
        execution_id = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        partition = f"BILLING_PERIOD={delivery.period:%Y-%m}"
        execution_folder = f"{delivery.executed_at:%Y%m%dT%H%M%SZ}-{execution_id}"
        lines = _cur_snapshot(delivery, usage_lines)
        files = _write_cur_data_files(export_root / "data" / partition / execution_folder, lines)
        if delivery.in_manifest:
            data_uris = [f"{CUR_S3_PREFIX}/data/{partition}/{execution_folder}/{name}" for name in files]
            _write_cur_manifest(
                export_root / "metadata" / partition / f"{CUR_EXPORT_NAME}-Manifest.json", execution_id, data_uris
            )


def _write_cur_data_files(folder: Path, lines: list[dict]) -> list[str]:
    """Splits the lines into the delivery's Parquet files; returns their names."""
    folder.mkdir(parents=True, exist_ok=True)
    size = math.ceil(len(lines) / CUR_DATA_FILES_PER_DELIVERY)
    names = []
    for index in range(CUR_DATA_FILES_PER_DELIVERY):
        name = f"{CUR_EXPORT_NAME}-{index + 1:05d}.snappy.parquet"
        chunk = lines[index * size : (index + 1) * size]
        table = pa.Table.from_pylist([_parquet_row(line) for line in chunk], schema=CUR_SCHEMA)
        pq.write_table(table, folder / name, compression="snappy", version="2.6", write_statistics=True)
        names.append(name)
    return names


def _parquet_row(line: dict) -> dict:
    """Map columns as sorted (key, value) pairs, the form pyarrow expects."""
    return {name: sorted(line[name].items()) if isinstance(line[name], dict) else line[name] for name, _ in CUR_COLUMNS}


def _write_cur_manifest(path: Path, execution_id: str, data_uris: list[str]) -> None:
    manifest = {
        "executionId": execution_id,
        "exportArn": CUR_EXPORT_ARN,
        "columns": [{"name": name, "type": MANIFEST_TYPE_NAMES[data_type]} for name, data_type in CUR_COLUMNS],
        "dataFiles": data_uris,
        "additionalOutputFiles": [],
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(manifest, indent=2) + "\n")


# ---------------------------------------------------------------------------------------------
# GCP detailed billing export rows
# ---------------------------------------------------------------------------------------------
def _invoice_month(usage_start: datetime) -> str:
    """`invoice.month`: the usage start's month in Pacific time."""
    offset = PACIFIC_DAYLIGHT_OFFSET if usage_start < PACIFIC_DAYLIGHT_TIME_ENDS else PACIFIC_STANDARD_OFFSET
    return f"{usage_start + offset:%Y%m}"


def _pacific_month_start(period: date) -> datetime:
    """Midnight Pacific time on the period's first day, in UTC."""
    daylight = _start_of(period) - PACIFIC_DAYLIGHT_OFFSET
    return daylight if daylight < PACIFIC_DAYLIGHT_TIME_ENDS else _start_of(period) - PACIFIC_STANDARD_OFFSET


def _gcp_time(moment: datetime) -> str:
    return f"{moment:%Y-%m-%d %H:%M:%S} UTC"


def _gcp_export_time(moment: datetime) -> str:
    return f"{moment:%Y-%m-%d %H:%M:%S.%f} UTC"


def _export_time_after(rng: random.Random, usage_end: datetime) -> datetime:
    low, high = GCP_EXPORT_LAG_HOURS
    return usage_end + timedelta(microseconds=rng.randrange(int(low * 3.6e9), int(high * 3.6e9)))


def _key_values(pairs: tuple[tuple[str, str], ...] | dict[str, str]) -> list[dict[str, str]]:
    return [{"key": key, "value": value} for key, value in (pairs.items() if isinstance(pairs, dict) else pairs)]


def _project_record(project: GcpProject) -> dict:
    return {
        "id": project.id,
        "number": project.number,
        "name": project.id,
        "labels": _key_values(project.labels),
        "ancestry_numbers": f"/{GCP_ORGANIZATION_NUMBER}/{project.number}/",
    }


def _location(zone: str | None) -> dict:
    if zone is None:
        return {"location": "us", "country": "US", "region": None, "zone": None}
    region = zone.rsplit("-", 1)[0]
    return {"location": zone, "country": "US", "region": region, "zone": zone}


@dataclass(frozen=True)
class GcpResource:
    """What a GCP row is billed for: project, resource names, labels, location."""

    project: GcpProject
    name: str | None
    global_name: str | None
    labels: dict[str, str] = field(default_factory=dict)
    system_labels: dict[str, str] = field(default_factory=dict)
    zone: str | None = GCP_ZONE


def _gcp_row(
    sku: GcpSku,
    resource: GcpResource,
    start: datetime,
    end: datetime,
    quantity: float,
    export_time: datetime,
    *,
    credits: tuple[tuple[str, str, float], ...] = (),
) -> dict:
    """One regular export row: `quantity` in the SKU's pricing unit at its list price.

    `credits` are (type, name, fraction of cost), e.g. ("COMMITTED_USAGE_DISCOUNT", …, -0.37).
    """
    cost = round(quantity * sku.price, GCP_COST_DECIMALS)
    return {
        "billing_account_id": GCP_BILLING_ACCOUNT,
        "service": dict(sku.service),
        "sku": {"id": sku.id, "description": sku.description},
        "usage_start_time": _gcp_time(start),
        "usage_end_time": _gcp_time(end),
        "project": _project_record(resource.project),
        "labels": _key_values(resource.labels),
        "system_labels": _key_values(resource.system_labels),
        "location": _location(resource.zone),
        "resource": {"name": resource.name, "global_name": resource.global_name},
        "export_time": _gcp_export_time(export_time),
        "cost": cost,
        "currency": "USD",
        "currency_conversion_rate": 1,
        "usage": {
            "amount": round(float(quantity * sku.usage_per_pricing_unit), MONEY_DECIMALS),
            "unit": sku.usage_unit,
            "amount_in_pricing_units": round(float(quantity), MONEY_DECIMALS),
            "pricing_unit": sku.pricing_unit,
        },
        "credits": [_credit(kind, name, round(fraction * cost, GCP_COST_DECIMALS)) for kind, name, fraction in credits],
        "invoice": {"month": _invoice_month(start)},
        "cost_type": "regular",
        "adjustment_info": None,
        "cost_at_list": cost,
        "transaction_type": "GOOGLE",
        "seller_name": "Google",
    }


def _credit(kind: str, name: str, amount: float) -> dict:
    credit_ids = {
        "COMMITTED_USAGE_DISCOUNT": RUN_3B_COMMITMENT_ID,
        "SUSTAINED_USAGE_DISCOUNT": "sustained-usage-discount-n2",
        "PROMOTION": "promotion-ml-research-2026",
    }
    return {"name": name, "amount": amount, "full_name": name, "id": credit_ids[kind], "type": kind}


def _gcp_rows(rng: random.Random) -> list[dict]:
    """Every export row, in the order Google appended them (by export time)."""
    rows = (
        _llm_3b_vm_rows(rng)
        + _llm_3b_storage_rows(rng)
        + _llm_3b_egress_rows(rng)
        + _llm_3b_logging_rows(rng)
        + _sandbox_vm_rows(rng)
        + _sandbox_bucket_rows(rng)
        + [_sandbox_adjustment_row()]
    )
    rows += _gcp_tax_rows(rows)
    rows.sort(key=lambda row: row["export_time"])
    return rows


def _vm_resource(
    project: GcpProject, name: str, vm_id: int, machine: GcpMachine, labels: dict[str, str]
) -> GcpResource:
    return GcpResource(
        project,
        name,
        f"//compute.googleapis.com/projects/{project.id}/zones/{GCP_ZONE}/instances/{vm_id}",
        labels,
        {
            "compute.googleapis.com/machine_spec": machine.machine_type,
            "compute.googleapis.com/cores": str(machine.vcpus),
            "compute.googleapis.com/memory": str(machine.memory_gib * 1024),
        },
    )


def _vm_hour_rows(
    machine: GcpMachine,
    resource: GcpResource,
    hour: datetime,
    export_time: datetime,
    core_credits: tuple[tuple[str, str, float], ...] = (),
) -> list[dict]:
    """A VM's rows for one hour: GPUs (with committed-use credits), cores and memory."""
    rows = []
    if machine.gpu_sku:
        cud = (("COMMITTED_USAGE_DISCOUNT", "Committed use discount: A3 GPUs", -RUN_3B_COMMITTED_USE_DISCOUNT),)
        rows.append(_gcp_row(machine.gpu_sku, resource, hour, hour + HOUR, machine.gpus, export_time, credits=cud))
    for sku, quantity in ((machine.core_sku, machine.vcpus), (machine.ram_sku, machine.memory_gib)):
        rows.append(_gcp_row(sku, resource, hour, hour + HOUR, quantity, export_time, credits=core_credits))
    return rows


def _llm_3b_vm_rows(rng: random.Random) -> list[dict]:
    labels = {"training-run": RUN_3B, "owner": "carol"}
    resources = [
        _vm_resource(TRAIN_PROJECT, f"llm-3b-train-{index}", RUN_3B_VM_ID_BASE + index, A3_HIGHGPU_8G, labels)
        for index in range(RUN_3B_VMS)
    ]
    rows = []
    for hour in _hours(RUN_3B_START, RUN_3B_END):
        for resource in resources:
            rows += _vm_hour_rows(A3_HIGHGPU_8G, resource, hour, _export_time_after(rng, hour + HOUR))
    return rows


def _llm_3b_storage_rows(rng: random.Random) -> list[dict]:
    bucket = GcpResource(
        TRAIN_PROJECT,
        f"projects/_/buckets/{RUN_3B_BUCKET}",
        f"//storage.googleapis.com/projects/_/buckets/{RUN_3B_BUCKET}",
        {"training_run": RUN_3B},
        zone=None,
    )
    rows = []
    for start, end in _day_slices(RUN_3B_START, GCP_DATA_END):
        stored_gib = _checkpoints_saved(RUN_3B_START, RUN_3B_END, RUN_3B_CHECKPOINT_EVERY, end) * RUN_3B_CHECKPOINT_GIB
        gib_months = stored_gib * ((end - start) / HOUR) / HOURS_PER_PRICING_MONTH
        rows.append(_gcp_row(STANDARD_STORAGE, bucket, start, end, gib_months, _export_time_after(rng, end)))
    return rows


def _llm_3b_egress_rows(rng: random.Random) -> list[dict]:
    """Checkpoint replication to Europe, billed to the first VM without its labels, plus one late row."""
    first_vm = _vm_resource(TRAIN_PROJECT, "llm-3b-train-0", RUN_3B_VM_ID_BASE, A3_HIGHGPU_8G, {})
    rows = [
        _gcp_row(
            EGRESS_TO_EMEA,
            first_vm,
            start,
            end,
            rng.uniform(*RUN_3B_DAILY_EGRESS_GIB) * ((end - start) / DAY),
            _export_time_after(rng, end),
        )
        for start, end in _day_slices(RUN_3B_START, RUN_3B_END)
    ]
    late_day = datetime(2026, 10, 31)
    rows.append(
        _gcp_row(EGRESS_TO_EMEA, first_vm, late_day, late_day + DAY, RUN_3B_LATE_EGRESS_GIB, RUN_3B_LATE_EXPORT_TIME)
    )
    return rows


def _llm_3b_logging_rows(rng: random.Random) -> list[dict]:
    log_bucket = GcpResource(
        TRAIN_PROJECT,
        None,
        f"//logging.googleapis.com/projects/{TRAIN_PROJECT.id}/locations/global/buckets/_Default",
        zone=None,
    )
    return [
        _gcp_row(
            LOG_VOLUME,
            log_bucket,
            start,
            end,
            rng.uniform(*RUN_3B_DAILY_LOG_GIB) * ((end - start) / DAY),
            _export_time_after(rng, end),
        )
        for start, end in _day_slices(RUN_3B_START, RUN_3B_END)
    ]


def _sandbox_vm_rows(rng: random.Random) -> list[dict]:
    """An unlabelled n2 dev VM, weekdays; sustained-use credits once it passed a quarter of the month."""
    resource = _vm_resource(SANDBOX_PROJECT, SANDBOX_VM_NAME, SANDBOX_VM_ID, N2_STANDARD_16, {})
    sustained_use = (("SUSTAINED_USAGE_DISCOUNT", "Sustained Usage Discount", -SANDBOX_SUSTAINED_USE_DISCOUNT),)
    hours_this_month: dict[date, int] = defaultdict(int)
    rows = []
    for hour in _workday_hours(SANDBOX_FIRST_DAY, GCP_DATA_END, SANDBOX_WORKDAY_HOURS):
        hours_this_month[_month_of(hour)] += 1
        past_threshold = hours_this_month[_month_of(hour)] > SANDBOX_SUSTAINED_USE_THRESHOLD * _hours_in_month(hour)
        rows += _vm_hour_rows(
            N2_STANDARD_16,
            resource,
            hour,
            _export_time_after(rng, hour + HOUR),
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
    for start, end in _day_slices(SANDBOX_FIRST_DAY, GCP_DATA_END):
        gib_months = SANDBOX_BUCKET_GIB * ((end - start) / HOUR) / HOURS_PER_PRICING_MONTH
        credits = promotion if _invoice_month(start) == SANDBOX_PROMOTION_MONTH else ()
        rows.append(
            _gcp_row(STANDARD_STORAGE, bucket, start, end, gib_months, _export_time_after(rng, end), credits=credits)
        )
    return rows


def _sandbox_adjustment_row() -> dict:
    bucket = GcpResource(SANDBOX_PROJECT, None, None, zone=None)
    start = SANDBOX_ADJUSTMENT["usage_start"]
    row = _gcp_row(STANDARD_STORAGE, bucket, start, start + DAY, 0.0, SANDBOX_ADJUSTMENT["export_time"])
    return row | {
        "cost": SANDBOX_ADJUSTMENT["cost"],
        "cost_at_list": SANDBOX_ADJUSTMENT["cost"],
        "cost_type": "adjustment",
        "adjustment_info": dict(SANDBOX_ADJUSTMENT["info"]),
    }


def _gcp_tax_rows(rows: list[dict]) -> list[dict]:
    """One sales-tax row per invoice month, on the month's net cost."""
    net_by_month: dict[str, float] = defaultdict(float)
    for row in rows:
        net_by_month[row["invoice"]["month"]] += row["cost"] + sum(credit["amount"] for credit in row["credits"])
    taxes = []
    for period in BILLING_PERIODS:
        month = f"{period:%Y%m}"
        start, end = _pacific_month_start(period), _pacific_month_start(_month_after(period))
        tax = round(net_by_month[month] * GCP_SALES_TAX_RATE, 2)
        row = _gcp_row(
            SALES_TAX, GcpResource(TRAIN_PROJECT, None, None, zone=None), start, end, 0.0, GCP_TAX_EXPORT_TIMES[period]
        )
        no_usage = {"amount": 0.0, "unit": None, "amount_in_pricing_units": 0.0, "pricing_unit": None}
        taxes.append(
            row | {"cost": tax, "cost_at_list": tax, "cost_type": "tax", "invoice": {"month": month}, "usage": no_usage}
        )
    return taxes


# ---------------------------------------------------------------------------------------------
# GCP export files
# ---------------------------------------------------------------------------------------------
def _write_gcp_export(folder: Path, rows: list[dict]) -> None:
    """One newline-delimited JSON file per export day; every third row's cost as a string."""
    folder.mkdir(parents=True, exist_ok=True)
    lines_by_day: dict[str, list[str]] = defaultdict(list)
    for index, row in enumerate(rows):
        if index % GCP_COST_AS_TEXT_EVERY == 0:
            row = row | {"cost": f"{row['cost']:.{GCP_COST_DECIMALS}f}"}
        export_day = row["export_time"][:10].replace("-", "")
        lines_by_day[export_day].append(json.dumps(row, separators=(",", ":")))
    for export_day, lines in sorted(lines_by_day.items()):
        (folder / f"{GCP_EXPORT_FILE_PREFIX}_{export_day}.jsonl").write_text("\n".join(lines) + "\n")


# ---------------------------------------------------------------------------------------------
# YAML files
# ---------------------------------------------------------------------------------------------
class _DemoYamlDumper(yaml.SafeDumper):
    """Block style except for lists of scalars; timestamps as `2026-10-03T00:00:00Z` and big
    numbers as `7.0e+9`, so that both load typed."""


# ---------------------------------------------------------------------------------------------
# Run event log
# ---------------------------------------------------------------------------------------------
def _event(run: str, moment: datetime, event: str, step: int, **extra: object) -> dict:
    return {"training_run": run, "time": f"{moment:%Y-%m-%dT%H:%M:%S}Z", "event": event, "step": step, **extra}


def _llm_7b_events() -> list[dict]:
    """Checkpoints every six hours of wall clock; each crash loses the work since the last one,
    and training resumes from it; training ends at RUN_7B_TRAINING_END."""

    def step_at(moment: datetime) -> int:
        lost = sum(
            (min(resume, moment) - _last_checkpoint(crash)) / HOUR
            for crash, resume in RUN_7B_FAILURES
            if crash < moment
        )
        return round(((moment - RUN_7B_START) / HOUR - lost) * RUN_7B_STEPS_PER_HOUR)

    events = [_event(RUN_7B, RUN_7B_START, "start", 0, gpus=RUN_7B_GPUS, config_hash=RUN_7B_CONFIG_HASH)]
    moment = RUN_7B_START + RUN_7B_CHECKPOINT_EVERY
    while moment <= RUN_7B_TRAINING_END:
        events.append(_event(RUN_7B, moment, "checkpoint", step_at(moment)))
        moment += RUN_7B_CHECKPOINT_EVERY
    for crash, resume in RUN_7B_FAILURES:
        events.append(_event(RUN_7B, crash, "failure", step_at(crash)))
        events.append(_event(RUN_7B, resume, "resume", step_at(resume), gpus=RUN_7B_GPUS))
    events.append(_event(RUN_7B, RUN_7B_TRAINING_END, "end", step_at(RUN_7B_TRAINING_END)))
    return sorted(events, key=lambda event: event["time"])


def _last_checkpoint(moment: datetime) -> datetime:
    return RUN_7B_START + RUN_7B_CHECKPOINT_EVERY * math.floor((moment - RUN_7B_START) / RUN_7B_CHECKPOINT_EVERY)


def _clean_run_events(
    run: str, start: datetime, end: datetime, every: timedelta, gpus: int, steps_per_hour: int, config_hash: str
) -> list[dict]:
    """A run without incidents: start, a checkpoint every `every`, end."""

    def step_at(moment: datetime) -> int:
        return round((moment - start) / HOUR * steps_per_hour)

    events = [_event(run, start, "start", 0, gpus=gpus, config_hash=config_hash)]
    moment = start + every
    while moment <= end:
        events.append(_event(run, moment, "checkpoint", step_at(moment)))
        moment += every
    events.append(_event(run, end, "end", step_at(end)))
    return events


def _write_json_lines(path: Path, documents: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(document) + "\n" for document in documents))


def _represent_datetime(dumper: yaml.SafeDumper, moment: datetime) -> yaml.ScalarNode:
    return dumper.represent_scalar("tag:yaml.org,2002:timestamp", f"{moment:%Y-%m-%dT%H:%M:%SZ}")


def _represent_float(dumper: yaml.SafeDumper, number: float) -> yaml.ScalarNode:
    if abs(number) < 1e6:
        return dumper.represent_float(number)
    mantissa, exponent = f"{number:e}".split("e")
    mantissa = mantissa.rstrip("0")
    text = f"{mantissa}0e+{int(exponent)}" if mantissa.endswith(".") else f"{mantissa}e+{int(exponent)}"
    return dumper.represent_scalar("tag:yaml.org,2002:float", text)


def _represent_list(dumper: yaml.SafeDumper, items: list) -> yaml.SequenceNode:
    scalars_only = not any(isinstance(item, dict | list) for item in items)
    return dumper.represent_sequence("tag:yaml.org,2002:seq", items, flow_style=scalars_only)


_DemoYamlDumper.add_representer(datetime, _represent_datetime)
_DemoYamlDumper.add_representer(list, _represent_list)
_DemoYamlDumper.add_representer(float, _represent_float)


def _write_yaml(path: Path, document: dict, *, header: str = "") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = yaml.dump(document, Dumper=_DemoYamlDumper, sort_keys=False, default_flow_style=False, width=120)
    path.write_text(header + text)
