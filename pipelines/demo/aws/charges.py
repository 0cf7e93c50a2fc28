"""CUR 2.0 lines of a whole billing period or of the Savings Plan's hours: commitment fees,
the Reserved Instance fee, and the period charges (credit, Business Support, sales tax)."""

from __future__ import annotations

import math
from collections import defaultdict
from datetime import date, datetime

from pipelines.demo.aws.catalog import (
    DEV_ACCOUNT,
    RESERVATION_ARN,
    RESERVATION_RECURRING_HOURLY,
    RESERVATION_UPFRONT_HOURLY,
    RESERVED_INSTANCE_FEE,
    RESERVED_INSTANCES,
    SAVINGS_PLAN_ARN,
    SAVINGS_PLAN_COVERED_NODES,
    SAVINGS_PLAN_FEE,
    SAVINGS_PLAN_OFFERING,
    SAVINGS_PLAN_P5_HOURLY,
    SAVINGS_PLAN_TERM_END,
    TRAINING_ACCOUNT,
    CurProduct,
)
from pipelines.demo.aws.lines import cur_line
from pipelines.demo.money import money, rate_text
from pipelines.demo.periods import HOUR, NOVEMBER, OCTOBER, each_hour, month_after, start_of

SALES_TAX_RATE = 0.0625
SALES_TAX_TYPE = "US Sales Tax"
PROMOTIONAL_CREDIT_AMOUNTS = {OCTOBER: -5000.0, NOVEMBER: -2500.0}
BUSINESS_SUPPORT_TIERS = ((10_000.0, 0.10), (80_000.0, 0.07), (250_000.0, 0.05), (math.inf, 0.03))


def savings_plan_fees(usage: list[dict], start: datetime, end: datetime) -> list[dict]:
    """One SavingsPlanRecurringFee per hour of the plan's term in [start, end)."""
    commitment = SAVINGS_PLAN_COVERED_NODES * SAVINGS_PLAN_P5_HOURLY
    used = defaultdict(float)
    for line in usage:
        if line["line_item_line_item_type"] == "SavingsPlanCoveredUsage":
            used[line["line_item_usage_start_date"]] += line["savings_plan_savings_plan_effective_cost"]
    return [
        cur_line(
            SAVINGS_PLAN_FEE,
            "SavingsPlanRecurringFee",
            TRAINING_ACCOUNT,
            hour,
            hour + HOUR,
            1.0,
            resource_id=SAVINGS_PLAN_ARN,
            line_item_unblended_cost=commitment,
            line_item_blended_cost=commitment,
            line_item_unblended_rate=rate_text(commitment),
            line_item_blended_rate=rate_text(commitment),
            pricing_public_on_demand_cost=0.0,
            savings_plan_savings_plan_a_r_n=SAVINGS_PLAN_ARN,
            savings_plan_offering_type=SAVINGS_PLAN_OFFERING,
            savings_plan_total_commitment_to_date=commitment,
            savings_plan_used_commitment=money(used[hour]),
        )
        for hour in each_hour(start, min(end, SAVINGS_PLAN_TERM_END))
    ]


def reserved_instance_fee(usage: list[dict], period: date) -> dict:
    """The month's RIFee: the recurring fee for every reserved hour, and the unused share of it."""
    start, end = start_of(period), start_of(month_after(period))
    reserved_hours = RESERVED_INSTANCES * (end - start) / HOUR
    used_hours = sum(
        line["line_item_usage_amount"]
        for line in usage
        if line["line_item_line_item_type"] == "DiscountedUsage"
        and line["reservation_reservation_a_r_n"] == RESERVATION_ARN
    )
    unused_hours = reserved_hours - used_hours
    recurring = money(reserved_hours * RESERVATION_RECURRING_HOURLY)
    return cur_line(
        RESERVED_INSTANCE_FEE,
        "RIFee",
        TRAINING_ACCOUNT,
        start,
        end,
        reserved_hours,
        line_item_unblended_cost=recurring,
        line_item_blended_cost=recurring,
        line_item_unblended_rate=rate_text(RESERVATION_RECURRING_HOURLY),
        line_item_blended_rate=rate_text(RESERVATION_RECURRING_HOURLY),
        line_item_normalized_usage_amount=0.0,
        line_item_availability_zone=None,
        pricing_public_on_demand_cost=0.0,
        pricing_public_on_demand_rate="0.0",
        pricing_term="Reserved",
        reservation_reservation_a_r_n=RESERVATION_ARN,
        reservation_amortized_upfront_fee_for_billing_period=money(reserved_hours * RESERVATION_UPFRONT_HOURLY),
        reservation_unused_amortized_upfront_fee_for_billing_period=money(unused_hours * RESERVATION_UPFRONT_HOURLY),
        reservation_unused_recurring_fee=money(unused_hours * RESERVATION_RECURRING_HOURLY),
        reservation_unused_quantity=money(unused_hours),
    )


def period_charge(product: CurProduct, line_type: str, period: date, amount: float, **overrides: object) -> dict:
    """A line spanning the whole billing period, with no usage rate (credit, support, tax)."""
    start, end = start_of(period), start_of(month_after(period))
    return cur_line(
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


def business_support_fee(charges: float) -> float:
    """AWS Business Support: a falling percentage of the month's charges, tier by tier."""
    fee, lower = 0.0, 0.0
    for upper, rate in BUSINESS_SUPPORT_TIERS:
        fee += max(0.0, min(charges, upper) - lower) * rate
        lower = upper
    return round(fee, 2)


def tax_lines(lines: list[dict], period: date) -> list[dict]:
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
            period_charge(
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
