"""The AWS → FOCUS mapping pinned on hand-computed CUR lines (CUR 2.0 column names).

Each line's expected FOCUS values are worked out by hand from the CUR semantics (AWS's Data
Exports documentation), not read back from the code.
"""

from datetime import datetime
from decimal import Decimal
from pathlib import Path
from tempfile import TemporaryDirectory

import polars as pl
import pytest

from pipelines.ingest.formats import aws_cur2
from pipelines.ingest.mappings import read_category_rules

PERIOD_START = datetime(2026, 10, 1)
PERIOD_END = datetime(2026, 11, 1)
HOUR = (datetime(2026, 10, 5, 4), datetime(2026, 10, 5, 5))
SP_ARN = "arn:aws:savingsplans::111122223333:savingsplan/0f1e2d3c"
RI_ARN = "arn:aws:ec2:us-east-1:111122223333:reserved-instances/9a8b7c6d"
INSTANCE = "arn:aws:ec2:us-east-1:111122223333:instance/i-0a1b2c3d4e5f60718"

COLUMNS = {
    "line_item_line_item_type": pl.String,
    "line_item_product_code": pl.String,
    "line_item_usage_type": pl.String,
    "line_item_usage_amount": pl.Float64,
    "line_item_unblended_cost": pl.Float64,
    "line_item_net_unblended_cost": pl.Float64,
    "line_item_tax_type": pl.String,
    "line_item_resource_id": pl.String,
    "line_item_usage_start_date": pl.Datetime("us"),
    "line_item_usage_end_date": pl.Datetime("us"),
    "pricing_public_on_demand_cost": pl.Float64,
    "pricing_term": pl.String,
    "pricing_unit": pl.String,
    "product_instance_type": pl.String,
    "product_region_code": pl.String,
    "savings_plan_savings_plan_a_r_n": pl.String,
    "savings_plan_savings_plan_effective_cost": pl.Float64,
    "savings_plan_net_savings_plan_effective_cost": pl.Float64,
    "savings_plan_total_commitment_to_date": pl.Float64,
    "savings_plan_used_commitment": pl.Float64,
    "reservation_reservation_a_r_n": pl.String,
    "reservation_effective_cost": pl.Float64,
    "reservation_unused_amortized_upfront_fee_for_billing_period": pl.Float64,
    "reservation_unused_recurring_fee": pl.Float64,
}


def line(line_type: str, unblended: float, **values: object) -> dict:
    """One CUR 2.0 line of account 111122223333 in October 2026; `values` set other columns."""
    start, end = values.pop("usage", HOUR)
    return {
        "line_item_line_item_type": line_type,
        "line_item_product_code": "AmazonEC2",
        "line_item_unblended_cost": unblended,
        "line_item_usage_start_date": start,
        "line_item_usage_end_date": end,
        "product_region_code": "us-east-1",
        **values,
    }


def p4d_hour(line_type: str, unblended: float, **values: object) -> dict:
    hour = {
        "line_item_usage_type": "USE1-BoxUsage:p4d.24xlarge",
        "line_item_usage_amount": 1.0,
        "pricing_unit": "Hrs",
        "product_instance_type": "p4d.24xlarge",
        "line_item_resource_id": INSTANCE,
        "pricing_term": "OnDemand",
    }
    return line(line_type, unblended, **(hour | values))


def normalize(lines: list[dict]) -> list[dict]:
    """The lines written as a one-file CUR 2.0 delivery, mapped by DuckDB, in delivery order."""
    rows = [{name: entry.get(name) for name in COLUMNS} for entry in lines]
    frame = pl.DataFrame(rows, schema=COLUMNS).with_columns(
        pl.lit("111122223333").alias("bill_payer_account_id"),
        pl.lit("111122223333").alias("line_item_usage_account_id"),
        pl.lit("USD").alias("line_item_currency_code"),
        pl.lit(PERIOD_START).alias("bill_billing_period_start_date"),
        pl.lit(PERIOD_END).alias("bill_billing_period_end_date"),
    )
    with TemporaryDirectory() as folder:
        export, staged = Path(folder) / "hand-made.parquet", Path(folder) / "staged.parquet"
        frame.write_parquet(export)
        delivery, _, _ = aws_cur2.read_delivery(
            [export],
            ["hand-made.parquet"],
            source_name="aws",
            source_format="aws_cur2",
            billing_period=PERIOD_START.date(),
            execution_id="e1",
            category_rules=read_category_rules(),
            ingested_at=datetime(2026, 11, 1),
        )
        delivery.stage(staged)
        mapped = pl.read_parquet(staged).to_dicts()
    return sorted(mapped, key=lambda row: int(row["x_LineItemKey"].rsplit("|", 1)[1]))


FIELDS = (
    "ChargeCategory",
    "ChargeClass",
    "ChargeFrequency",
    "PricingCategory",
    "BilledCost",
    "EffectiveCost",
    "ListCost",
    "CommitmentDiscountId",
    "CommitmentDiscountType",
    "CommitmentDiscountStatus",
    "x_GpuHours",
)


def pick(row: dict) -> tuple:
    return tuple(row[f] for f in FIELDS)


def D(text: str) -> Decimal:  # noqa: N802 - reads like a literal
    return Decimal(text).quantize(Decimal("1e-10"))


def test_savings_plan_covered_usage_negation_and_recurring_fee() -> None:
    # One p4d hour at 32.7726 on demand, covered by a $24/h Savings Plan that used $20 of it.
    rows = normalize(
        [
            p4d_hour(
                "SavingsPlanCoveredUsage",
                32.7726,
                pricing_public_on_demand_cost=32.7726,
                savings_plan_savings_plan_a_r_n=SP_ARN,
                savings_plan_savings_plan_effective_cost=20.0,
            ),
            p4d_hour(
                "SavingsPlanNegation",
                -32.7726,
                pricing_public_on_demand_cost=0.0,
                savings_plan_savings_plan_a_r_n=SP_ARN,
            ),
            line(
                "SavingsPlanRecurringFee",
                24.0,
                line_item_product_code="ComputeSavingsPlans",
                savings_plan_savings_plan_a_r_n=SP_ARN,
                savings_plan_total_commitment_to_date=24.0,
                savings_plan_used_commitment=20.0,
            ),
        ]
    )
    assert [pick(r) for r in rows] == [
        (
            "Usage",
            None,
            "Usage-Based",
            "Committed",
            D("32.7726"),
            D("20"),
            D("32.7726"),
            SP_ARN,
            "Savings Plan",
            "Used",
            D("8"),
        ),
        ("Usage", None, "Usage-Based", "Standard", D("-32.7726"), D("0"), None, SP_ARN, "Savings Plan", None, D("0")),
        ("Purchase", None, "Recurring", None, D("24"), D("4"), None, SP_ARN, "Savings Plan", None, D("0")),
    ]
    # Amortized and billed agree over the hour: the plan's $24 = $20 used + $4 unused.
    assert sum(r["EffectiveCost"] for r in rows) == sum(r["BilledCost"] for r in rows) == D("24")
    assert rows[0]["x_CostCategory"] == "compute" and rows[0]["ServiceCategory"] == "Compute"


def test_reserved_instance_usage_fee_with_unused_hours_and_upfront_fee() -> None:
    # A month of one RI: 720 reserved hours, 700 used; 19.5/h effective (half upfront, half recurring).
    rows = normalize(
        [
            p4d_hour(
                "DiscountedUsage",
                0.0,
                pricing_term="Reserved",
                pricing_public_on_demand_cost=32.7726,
                reservation_reservation_a_r_n=RI_ARN,
                reservation_effective_cost=19.5,
            ),
            line(
                "RIFee",
                7020.0,
                usage=(PERIOD_START, PERIOD_END),
                reservation_reservation_a_r_n=RI_ARN,
                line_item_usage_type="HeavyUsage:p4d.24xlarge",
                line_item_usage_amount=720.0,
                reservation_unused_amortized_upfront_fee_for_billing_period=195.0,
                reservation_unused_recurring_fee=195.0,
            ),
            line("Fee", 7020.0, usage=(PERIOD_START, PERIOD_END), reservation_reservation_a_r_n=RI_ARN),
        ]
    )
    assert [pick(r) for r in rows] == [
        (
            "Usage",
            None,
            "Usage-Based",
            "Committed",
            D("0"),
            D("19.5"),
            D("32.7726"),
            RI_ARN,
            "Reservation",
            "Used",
            D("8"),
        ),
        # 20 unused hours × 19.5 = 390: the unused part of the fee is its amortized cost.
        ("Purchase", None, "Recurring", None, D("7020"), D("390"), None, RI_ARN, "Reservation", None, D("0")),
        # The upfront payment itself is amortized into usage: 0.
        ("Purchase", None, "One-Time", None, D("7020"), D("0"), None, RI_ARN, "Reservation", None, D("0")),
    ]


def test_refunds_keep_the_category_they_refund_and_correct_the_earlier_period() -> None:
    september = (datetime(2026, 9, 1), datetime(2026, 10, 1))
    rows = normalize(
        [
            line("Refund", -10.0, usage=september),
            line("Refund", -0.8, usage=september, line_item_tax_type="VAT"),
            line("Refund", -24.0, line_item_product_code="ComputeSavingsPlans"),
        ]
    )
    assert [
        (r["ChargeCategory"], r["ChargeClass"], r["ChargeFrequency"], r["BilledCost"], r["EffectiveCost"]) for r in rows
    ] == [
        ("Usage", "Correction", "One-Time", D("-10"), D("-10")),
        ("Tax", "Correction", "One-Time", D("-0.8"), D("-0.8")),
        # A refunded Savings Plan fee was never amortized into usage.
        ("Purchase", None, "One-Time", D("-24"), D("0")),
    ]


def test_credit_tax_and_edp_discount_lines() -> None:
    month = (PERIOD_START, PERIOD_END)
    rows = normalize(
        [
            line("Credit", -50.0, usage=month),
            line("Tax", 7.5, usage=month, line_item_tax_type="VAT", line_item_product_code="AmazonEC2"),
            p4d_hour("Usage", 100.0, line_item_net_unblended_cost=97.0, pricing_public_on_demand_cost=100.0),
            line("EdpDiscount", -3.0, line_item_net_unblended_cost=0.0),
            p4d_hour(
                "Usage",
                10.0,
                line_item_usage_type="USE1-SpotUsage:p4d.24xlarge",
                pricing_term=None,
                pricing_public_on_demand_cost=32.7726,
            ),
        ]
    )
    assert [pick(r)[:7] for r in rows] == [
        ("Credit", None, "One-Time", None, D("-50"), D("-50"), None),
        ("Tax", None, "Usage-Based", None, D("7.5"), D("7.5"), None),
        # Net unblended is what is billed when the account has discounts; the net of the EDP line is 0.
        ("Usage", None, "Usage-Based", "Standard", D("97"), D("97"), D("100")),
        ("Usage", None, "Usage-Based", None, D("0"), D("0"), None),
        ("Usage", None, "Usage-Based", "Dynamic", D("10"), D("10"), D("32.7726")),
    ]
    assert [r["x_CostCategory"] for r in rows[:2]] == ["other", "tax"]
    assert rows[4]["x_GpuHours"] == D("8")


def test_net_savings_plan_effective_cost_is_preferred() -> None:
    rows = normalize(
        [
            p4d_hour(
                "SavingsPlanCoveredUsage",
                32.7726,
                line_item_net_unblended_cost=31.7894,
                savings_plan_savings_plan_a_r_n=SP_ARN,
                savings_plan_savings_plan_effective_cost=20.0,
                savings_plan_net_savings_plan_effective_cost=19.4,
            ),
        ]
    )
    assert (rows[0]["BilledCost"], rows[0]["EffectiveCost"]) == (D("31.7894"), D("19.4"))


@pytest.mark.parametrize(
    ("resource_id", "key"),
    [
        (INSTANCE, "i-0a1b2c3d4e5f60718"),
        ("i-0a1b2c3d4e5f60718", "i-0a1b2c3d4e5f60718"),
        ("arn:aws:s3:::ckpt-7b", "ckpt-7b"),
        ("ckpt-7b", "ckpt-7b"),
        ("arn:aws:ec2:us-east-1:111122223333:volume/vol-0123456789abcdef0", "vol-0123456789abcdef0"),
    ],
)
def test_arns_and_bare_ids_normalize_to_the_same_key(resource_id: str, key: str, tmp_path: Path) -> None:
    import duckdb

    from pipelines.warehouse.connection import create_schema

    with duckdb.connect(str(tmp_path / "w.duckdb")) as conn:
        create_schema(conn)
        assert conn.execute("select normalize_resource_id($id)", {"id": resource_id}).fetchone() == (key,)


def test_service_category_comes_from_the_service_code_lookup() -> None:
    rows = normalize(
        [
            line("Usage", 1.0, line_item_product_code="AmazonSageMaker"),
            line("Usage", 1.0, line_item_product_code="AmazonS3"),
            # Not in the lookup: from its cost category, `other` here.
            line("Usage", 1.0, line_item_product_code="AmazonNotInTheTable"),
        ]
    )
    assert [r["ServiceCategory"] for r in rows] == ["AI and Machine Learning", "Storage", "Other"]
