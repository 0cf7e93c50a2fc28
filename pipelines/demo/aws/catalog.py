"""The AWS side of the demo's world: the organization's accounts, the instance types it runs, and
every kind of CUR line it is billed for (products, SKUs, public prices), with the terms of its
Compute Savings Plan and its p4d Reserved Instances."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

PAYER_ACCOUNT_ID = "111122223333"
PAYER_ACCOUNT_NAME = "RunLedger Demo Org"
AWS_LEGAL_ENTITY = "Amazon Web Services, Inc."
AWS_REGION = "us-east-1"
AWS_REPLICA_REGION = "us-west-2"
REGION_NAMES = {AWS_REGION: "US East (N. Virginia)", AWS_REPLICA_REGION: "US West (Oregon)"}


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
SAVINGS_PLAN_COVERED_NODES = 14  # the hourly commitment pays for exactly this many p5 nodes
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
