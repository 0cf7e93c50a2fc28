"""Rows of the GCP detailed billing export (BigQuery schema): what a row is billed for, its
timestamps and invoice month, its credits, and a VM's rows for one hour."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta

from pipelines.demo.gcp.catalog import (
    A3_GPU_COMMITMENT_ID,
    A3_GPU_COMMITTED_USE_DISCOUNT,
    GCP_BILLING_ACCOUNT,
    GCP_ORGANIZATION_NUMBER,
    GCP_ZONE,
    GcpMachine,
    GcpProject,
    GcpSku,
)
from pipelines.demo.money import MONEY_DECIMALS
from pipelines.demo.periods import HOUR, start_of

GCP_COST_DECIMALS = 6
GCP_EXPORT_LAG_HOURS = (2.0, 9.0)
PACIFIC_DAYLIGHT_TIME_ENDS = datetime(2026, 11, 1, 9)  # UTC; invoice months follow Pacific time
PACIFIC_DAYLIGHT_OFFSET = timedelta(hours=-7)
PACIFIC_STANDARD_OFFSET = timedelta(hours=-8)


def invoice_month(usage_start: datetime) -> str:
    """`invoice.month`: the usage start's month in Pacific time."""
    offset = PACIFIC_DAYLIGHT_OFFSET if usage_start < PACIFIC_DAYLIGHT_TIME_ENDS else PACIFIC_STANDARD_OFFSET
    return f"{usage_start + offset:%Y%m}"


def pacific_month_start(period: date) -> datetime:
    """Midnight Pacific time on the period's first day, in UTC."""
    daylight = start_of(period) - PACIFIC_DAYLIGHT_OFFSET
    return daylight if daylight < PACIFIC_DAYLIGHT_TIME_ENDS else start_of(period) - PACIFIC_STANDARD_OFFSET


def _gcp_time(moment: datetime) -> str:
    return f"{moment:%Y-%m-%d %H:%M:%S} UTC"


def _gcp_export_time(moment: datetime) -> str:
    return f"{moment:%Y-%m-%d %H:%M:%S.%f} UTC"


def export_time_after(rng: random.Random, usage_end: datetime) -> datetime:
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


def gcp_row(
    sku: GcpSku,
    resource: GcpResource,
    start: datetime,
    end: datetime,
    quantity: float,
    export_time: datetime,
    *,
    credits: tuple[tuple[str, str, float], ...] = (),
) -> dict:
    """One regular export row: `quantity` in the SKU's pricing unit at its list price (the
    detailed export's `price` of a single tier).

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
        "price": {
            "effective_price": sku.price,
            "tier_start_amount": 0,
            "unit": sku.pricing_unit,
            "pricing_unit_quantity": 1,
        },
        "credits": [_credit(kind, name, round(fraction * cost, GCP_COST_DECIMALS)) for kind, name, fraction in credits],
        "invoice": {"month": invoice_month(start)},
        "cost_type": "regular",
        "adjustment_info": None,
        "cost_at_list": cost,
        "transaction_type": "GOOGLE",
        "seller_name": "Google",
    }


def _credit(kind: str, name: str, amount: float) -> dict:
    credit_ids = {
        "COMMITTED_USAGE_DISCOUNT": A3_GPU_COMMITMENT_ID,
        "SUSTAINED_USAGE_DISCOUNT": "sustained-usage-discount-n2",
        "PROMOTION": "promotion-ml-research-2026",
    }
    return {"name": name, "amount": amount, "full_name": name, "id": credit_ids[kind], "type": kind}


def vm_resource(project: GcpProject, name: str, vm_id: int, machine: GcpMachine, labels: dict[str, str]) -> GcpResource:
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


def vm_hour_rows(
    machine: GcpMachine,
    resource: GcpResource,
    hour: datetime,
    export_time: datetime,
    core_credits: tuple[tuple[str, str, float], ...] = (),
) -> list[dict]:
    """A VM's rows for one hour: GPUs (with committed-use credits), cores and memory."""
    rows = []
    if machine.gpu_sku:
        cud = (("COMMITTED_USAGE_DISCOUNT", "Committed use discount: A3 GPUs", -A3_GPU_COMMITTED_USE_DISCOUNT),)
        rows.append(gcp_row(machine.gpu_sku, resource, hour, hour + HOUR, machine.gpus, export_time, credits=cud))
    for sku, quantity in ((machine.core_sku, machine.vcpus), (machine.ram_sku, machine.memory_gib)):
        rows.append(gcp_row(sku, resource, hour, hour + HOUR, quantity, export_time, credits=core_credits))
    return rows
