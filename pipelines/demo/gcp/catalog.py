"""The GCP side of the demo's world: the billing account, its projects, the machines they run, and
the SKUs they are billed for at list price, with the committed-use discount on A3 GPUs."""

from __future__ import annotations

from dataclasses import dataclass

GCP_BILLING_ACCOUNT = "01A2B3-C4D5E6-F7A8B9"
GCP_ORGANIZATION_NUMBER = "739204815563"
GIB = 2**30
HOURS_PER_PRICING_MONTH = 730
A3_GPU_COMMITMENT_ID = "projects/482910375566/regions/us-central1/commitments/a3-h100-1yr"
A3_GPU_COMMITTED_USE_DISCOUNT = 0.37

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
