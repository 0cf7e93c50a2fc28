"""CUR 2.0 usage lines: one line at a product's public on-demand rate, and the same line as
Savings-Plan-covered or Reserved-Instance-discounted usage."""

from __future__ import annotations

import zlib
from collections.abc import Callable
from datetime import datetime

from pipelines.demo.aws.catalog import (
    AWS_LEGAL_ENTITY,
    AWS_REGION,
    EBS_GP3,
    PRODUCT_NAMES,
    REGION_NAMES,
    RESERVATION_ARN,
    RESERVATION_RECURRING_HOURLY,
    RESERVATION_UPFRONT_HOURLY,
    SAVINGS_PLAN_ARN,
    SAVINGS_PLAN_OFFERING,
    SAVINGS_PLAN_P5_HOURLY,
    TRAINING_ACCOUNT,
    AwsAccount,
    CurProduct,
)
from pipelines.demo.money import money, rate_text
from pipelines.demo.periods import HOUR, hours_in_month


def cur_line(
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
    cost = money(amount * product.rate)
    instance = product.instance
    line = {
        "cost_category": {"environment": account.environment},
        "discount": {},
        "line_item_availability_zone": f"{AWS_REGION}a" if instance else None,
        "line_item_blended_cost": cost,
        "line_item_blended_rate": rate_text(product.rate),
        "line_item_currency_code": "USD",
        "line_item_legal_entity": AWS_LEGAL_ENTITY,
        "line_item_line_item_description": product.description,
        "line_item_line_item_type": line_type,
        "line_item_net_unblended_cost": None,
        "line_item_net_unblended_rate": None,
        "line_item_normalization_factor": instance.normalization_factor if instance else 0.0,
        "line_item_normalized_usage_amount": money(amount * instance.normalization_factor) if instance else 0.0,
        "line_item_operation": product.operation,
        "line_item_product_code": product.product_code,
        "line_item_resource_id": resource_id,
        "line_item_tax_type": None,
        "line_item_unblended_cost": cost,
        "line_item_unblended_rate": rate_text(product.rate),
        "line_item_usage_account_id": account.id,
        "line_item_usage_account_name": account.name,
        "line_item_usage_amount": money(amount),
        "line_item_usage_end_date": end,
        "line_item_usage_start_date": start,
        "line_item_usage_type": product.usage_type,
        "pricing_currency": "USD",
        "pricing_public_on_demand_cost": cost,
        "pricing_public_on_demand_rate": rate_text(product.rate),
        "pricing_rate_id": _rate_id(product),
        "pricing_term": "OnDemand" if product.rate else None,
        "pricing_unit": product.pricing_unit,
        "product": _product_map(product),
        "product_from_region_code": product.region if product.to_region else None,
        "product_instance_type": instance.name if instance else None,
        "product_location": REGION_NAMES.get(product.region),
        "product_product_family": product.family,
        "product_region_code": product.region,
        "product_servicecode": product.product_code,
        "product_sku": product.sku,
        "product_to_region_code": product.to_region,
        "reservation_amortized_upfront_fee_for_billing_period": 0.0,
        "reservation_effective_cost": 0.0,
        "reservation_reservation_a_r_n": None,
        "reservation_unused_amortized_upfront_fee_for_billing_period": 0.0,
        "reservation_unused_quantity": 0.0,
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


def _rate_id(product: CurProduct) -> str | None:
    """The numeric id AWS gives the price a line is rated at (one per SKU and usage type here)."""
    if product.sku is None:
        return None
    return str(zlib.crc32(f"{product.sku}:{product.usage_type}".encode()))


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


def savings_plan_covered(on_demand: dict) -> list[dict]:
    """An on-demand instance-hour as Savings-Plan-covered usage plus its negation."""
    hours = on_demand["line_item_usage_amount"]
    list_cost = on_demand["line_item_unblended_cost"]
    plan = {"savings_plan_savings_plan_a_r_n": SAVINGS_PLAN_ARN, "savings_plan_offering_type": SAVINGS_PLAN_OFFERING}
    covered = (
        on_demand
        | plan
        | {
            "line_item_line_item_type": "SavingsPlanCoveredUsage",
            "savings_plan_savings_plan_effective_cost": money(hours * SAVINGS_PLAN_P5_HOURLY),
        }
    )
    negative_rate = rate_text(-float(on_demand["line_item_unblended_rate"]))
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


def reserved_instance_usage(on_demand: dict) -> dict:
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
        "reservation_effective_cost": money(hours * (RESERVATION_UPFRONT_HOURLY + RESERVATION_RECURRING_HOURLY)),
    }


def gb_months(gb: float, start: datetime, end: datetime) -> float:
    """Storage over [start, end) in GB-months of that month, as AWS meters TimedStorage."""
    return gb * ((end - start) / HOUR) / hours_in_month(start)


def node_volume_lines(
    start: datetime, end: datetime, nodes: int, volume_gb: float, volume_id: str, tags: Callable[[int], dict]
) -> list[dict]:
    """A training run's gp3 volume per node for one charge period, in node order: `volume_id` is
    formatted with the node number, `tags` gives each node's tags."""
    return [
        cur_line(
            EBS_GP3,
            "Usage",
            TRAINING_ACCOUNT,
            start,
            end,
            gb_months(volume_gb, start, end),
            resource_id=volume_id.format(node=node),
            tags=tags(node),
        )
        for node in range(1, nodes + 1)
    ]
