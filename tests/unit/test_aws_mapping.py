"""The AWS → FOCUS mapping pinned on hand-computed CUR lines (CUR 2.0 column names).

Each line's expected FOCUS values are worked out by hand from the CUR semantics (AWS's Data
Exports documentation), not read back from the code.
"""

import json
from datetime import datetime
from decimal import Decimal
from pathlib import Path
from tempfile import TemporaryDirectory

import duckdb
import polars as pl
import pytest

from pipelines.sources.aws_cur import cur2
from pipelines.sources.delivery import MappedDelivery, memory_connection
from pipelines.sources.mappings import read_category_rules

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
    "reservation_unused_quantity": pl.Float64,
    "line_item_unblended_rate": pl.String,
    "pricing_public_on_demand_rate": pl.String,
    "pricing_rate_id": pl.String,
    "pricing_currency": pl.String,
    "product_sku": pl.String,
    "product_location": pl.String,
    "product_vcpu": pl.String,
    "product_gpu": pl.String,
    "product_memory": pl.String,
    "product_operating_system": pl.String,
    "product_instance_type_family": pl.String,
    "capacity_reservation_capacity_reservation_a_r_n": pl.String,
    "capacity_reservation_capacity_reservation_status": pl.String,
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


def delivery(lines: list[dict], folder: Path) -> MappedDelivery:
    """The lines written as a one-file CUR 2.0 delivery in `folder`, read."""
    rows = [{name: entry.get(name) for name in COLUMNS} for entry in lines]
    frame = pl.DataFrame(rows, schema=COLUMNS).with_columns(
        pl.lit("111122223333").alias("bill_payer_account_id"),
        pl.lit("111122223333").alias("line_item_usage_account_id"),
        pl.lit("USD").alias("line_item_currency_code"),
        pl.lit(PERIOD_START).alias("bill_billing_period_start_date"),
        pl.lit(PERIOD_END).alias("bill_billing_period_end_date"),
    )
    export = folder / "hand-made.parquet"
    frame.write_parquet(export)
    read, _, _ = cur2.read_delivery(
        [export],
        ["hand-made.parquet"],
        source_name="aws",
        source_format="aws_cur2",
        billing_period=PERIOD_START.date(),
        execution_id="e1",
        category_rules=read_category_rules(),
        ingested_at=datetime(2026, 11, 1),
    )
    return read


def normalize(lines: list[dict]) -> list[dict]:
    """The lines written as a one-file CUR 2.0 delivery, mapped by DuckDB, in delivery order."""
    with TemporaryDirectory() as folder:
        staged = Path(folder) / "staged.parquet"
        delivery(lines, Path(folder)).stage(staged)
        mapped = pl.read_parquet(staged).to_dicts()
    # a line's own row, then the row derived from it (its key plus `|unused`)
    return sorted(mapped, key=lambda row: (int(row["x_LineItemKey"].split("|")[3]), row["x_DerivedFrom"] is not None))


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


def test_savings_plan_covered_usage_negation_recurring_fee_and_its_unused_part() -> None:
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
                line_item_usage_amount=1.0,
                savings_plan_savings_plan_a_r_n=SP_ARN,
                savings_plan_total_commitment_to_date=24.0,
                savings_plan_used_commitment=20.0,
            ),
        ]
    )
    sp = (SP_ARN, "Savings Plan")
    assert [pick(r) for r in rows] == [
        ("Usage", None, "Usage-Based", "Committed", D("32.7726"), D("20"), D("32.7726"), *sp, "Used", D("8")),
        # The negation's list cost is carried by the covered line: 0, not NULL (FOCUS: never NULL).
        ("Usage", None, "Usage-Based", "Standard", D("-32.7726"), D("0"), D("0"), *sp, "Used", D("0")),
        # The fee buys the hour's commitment: a purchase for future usage, amortized 0 ...
        ("Purchase", None, "Recurring", None, D("24"), D("0"), D("0"), *sp, None, D("0")),
        # ... and its $4 unused part is a Usage row of its own, billed 0.
        ("Usage", None, "Usage-Based", "Committed", D("0"), D("4"), D("0"), *sp, "Unused", D("0")),
    ]
    fee, unused = rows[2], rows[3]
    assert unused["x_LineItemKey"] == fee["x_LineItemKey"] + "|unused"
    assert (unused["x_DerivedFrom"], fee["x_DerivedFrom"]) == (fee["x_LineItemKey"], None)
    assert (unused["ChargePeriodStart"], unused["ChargePeriodEnd"]) == HOUR
    # A Savings Plan commits spend, measured in the billing currency.
    assert [
        (r["CommitmentDiscountCategory"], r["CommitmentDiscountQuantity"], r["CommitmentDiscountUnit"]) for r in rows
    ] == [
        ("Spend", D("20"), "USD"),
        ("Spend", D("0"), "USD"),
        ("Spend", D("24"), "USD"),
        ("Spend", D("4"), "USD"),
    ]
    assert (unused["PricingQuantity"], unused["PricingUnit"], unused["ConsumedQuantity"]) == (D("4"), "USD", None)
    # Amortized and billed agree over the hour, as before the unused row existed: $24 = $20 used + $4 unused.
    assert sum(r["EffectiveCost"] for r in rows) == sum(r["BilledCost"] for r in rows) == D("24")
    assert rows[0]["x_CostCategory"] == "compute" and rows[0]["ServiceCategory"] == "Compute"
    assert unused["x_CostCategory"] == fee["x_CostCategory"] and unused["ServiceName"] == fee["ServiceName"]


def test_a_fully_used_savings_plan_hour_has_no_unused_row() -> None:
    rows = normalize(
        [
            line(
                "SavingsPlanRecurringFee",
                24.0,
                line_item_product_code="ComputeSavingsPlans",
                savings_plan_savings_plan_a_r_n=SP_ARN,
                savings_plan_total_commitment_to_date=24.0,
                savings_plan_used_commitment=24.0,
            ),
        ]
    )
    assert [(r["ChargeCategory"], r["EffectiveCost"], r["x_DerivedFrom"]) for r in rows] == [("Purchase", D("0"), None)]


def ri_month(**fee: object) -> list[dict]:
    """A month of one RI: 720 reserved hours, 700 used; 19.5/h effective (9.75 upfront, 9.75 recurring)."""
    return [
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
            pricing_unit="Hrs",
            reservation_unused_amortized_upfront_fee_for_billing_period=195.0,
            reservation_unused_recurring_fee=195.0,
            **fee,
        ),
        line("Fee", 7020.0, usage=(PERIOD_START, PERIOD_END), reservation_reservation_a_r_n=RI_ARN),
    ]


def test_reserved_instance_usage_fee_with_unused_hours_and_upfront_fee() -> None:
    rows = normalize(ri_month())
    ri = (RI_ARN, "Reservation")
    assert [pick(r) for r in rows] == [
        ("Usage", None, "Usage-Based", "Committed", D("0"), D("19.5"), D("32.7726"), *ri, "Used", D("8")),
        # The recurring fee is a purchase: amortized 0 ...
        ("Purchase", None, "Recurring", None, D("7020"), D("0"), D("0"), *ri, None, D("0")),
        # ... its 20 unused hours × 19.5 = 390 (unused upfront + unused recurring) a row of their own.
        ("Usage", None, "Usage-Based", "Committed", D("0"), D("390"), D("0"), *ri, "Unused", D("0")),
        # The upfront payment itself is amortized into usage: 0.
        ("Purchase", None, "One-Time", None, D("7020"), D("0"), D("0"), *ri, None, D("0")),
    ]
    # A reservation commits hours: 1 used, 720 bought, 20 (720 × 195 / 7020 of the recurring fee) unused.
    assert [
        (r["CommitmentDiscountCategory"], r["CommitmentDiscountQuantity"], r["CommitmentDiscountUnit"])
        for r in rows[:3]
    ] == [
        ("Usage", D("1"), "Hours"),
        ("Usage", D("720"), "Hours"),
        ("Usage", D("20"), "Hours"),
    ]
    assert (rows[2]["PricingQuantity"], rows[2]["PricingUnit"]) == (D("20"), "Hours")
    assert rows[2]["x_LineItemKey"] == rows[1]["x_LineItemKey"] + "|unused"
    # Σ EffectiveCost is the amortized total the fee line alone carried before: 19.5 + 390.
    assert sum(r["EffectiveCost"] for r in rows) == D("409.5")
    assert sum(r["BilledCost"] for r in rows) == D("14040")


def test_the_unused_hours_aws_gives_are_taken_as_they_are() -> None:
    rows = normalize(ri_month(reservation_unused_quantity=20.25))
    assert rows[2]["CommitmentDiscountStatus"] == "Unused"
    assert rows[2]["CommitmentDiscountQuantity"] == D("20.25")


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
        # Without a public cost, a credit's or tax's list cost is what it bills (FOCUS: never NULL).
        ("Credit", None, "One-Time", None, D("-50"), D("-50"), D("-50")),
        ("Tax", None, "Usage-Based", None, D("7.5"), D("7.5"), D("7.5")),
        # Net unblended is what is billed when the account has discounts; the net of the EDP line is 0.
        ("Usage", None, "Usage-Based", "Standard", D("97"), D("97"), D("100")),
        ("Usage", None, "Usage-Based", None, D("0"), D("0"), D("0")),
        ("Usage", None, "Usage-Based", "Dynamic", D("10"), D("10"), D("32.7726")),
    ]
    assert [r["x_CostCategory"] for r in rows[:2]] == ["other", "tax"]
    assert rows[4]["x_GpuHours"] == D("8")
    # FOCUS: a tax has no quantity, unit or unit prices; a credit without a unit no quantity either.
    assert [
        (r["PricingQuantity"], r["PricingUnit"], r["ListUnitPrice"], r["ContractedUnitPrice"]) for r in rows[:2]
    ] == [
        (None, None, None, None),
        (None, None, None, None),
    ]


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


def test_units_regions_skus_accounts_and_prices_of_a_usage_line() -> None:
    rows = normalize(
        [
            p4d_hour(
                "Usage",
                21.96,
                line_item_unblended_rate="21.96",
                pricing_public_on_demand_rate="21.96",
                pricing_public_on_demand_cost=21.96,
                pricing_rate_id="1234567890",
                pricing_currency="USD",
                product_sku="7Q9UXNH3C2MKB6WR",
                product_location="US East (N. Virginia)",
                product_vcpu="96",
                product_gpu="8",
                product_memory="1152 GiB",
                product_operating_system="Linux",
                product_instance_type_family="p4d",
            ),
            line(
                "Usage",
                8.0,
                line_item_usage_type="USE1-EBS:VolumeUsage.gp3",
                line_item_usage_amount=100.0,
                line_item_unblended_rate="0.08",
                pricing_unit="GB-Mo",
                product_sku="D7EGG5W7JDE4SU4A",
            ),
            line("Usage", 0.88, line_item_product_code="AWSGlue", line_item_usage_amount=2.0, pricing_unit="DPU-Hour"),
        ]
    )
    hour, volume, glue = rows
    assert (hour["PricingUnit"], hour["ConsumedUnit"], hour["x_ProviderPricingUnit"]) == ("Hours", "Hours", "Hrs")
    assert (volume["PricingUnit"], volume["x_ProviderConsumedUnit"]) == ("GB-Months", "GB-Mo")
    assert (glue["PricingUnit"], glue["ConsumedQuantity"], glue["ConsumedUnit"]) == ("DPU-Hours", D("2"), "DPU-Hours")
    assert (hour["RegionId"], hour["RegionName"]) == ("us-east-1", "US East (N. Virginia)")
    # Without a location, the region's name is its id (FOCUS: never NULL beside a RegionId).
    assert volume["RegionName"] == "us-east-1"
    assert (hour["SkuMeter"], volume["SkuMeter"], glue["SkuMeter"]) == (
        "USE1-BoxUsage:p4d.24xlarge",
        "USE1-EBS:VolumeUsage.gp3",
        None,
    )
    assert json.loads(hour["SkuPriceDetails"]) == {
        "InstanceType": "p4d.24xlarge",
        "InstanceSeries": "p4d",
        "CoreCount": 96,
        "GpuCount": 8,
        "MemorySize": 1152,
        "OperatingSystem": "Linux",
    }
    # FOCUS: no price details without a price id.
    assert volume["SkuPriceDetails"] is None
    assert (hour["ContractedUnitPrice"], volume["ContractedUnitPrice"]) == (D("21.96"), D("0.08"))
    assert (hour["BillingAccountType"], hour["SubAccountType"]) == ("Payer Account", "Linked Account")
    assert [r["ServiceSubcategory"] for r in rows] == ["Virtual Machines", "Virtual Machines", "Data Processing"]
    assert (hour["PricingCurrency"], hour["PricingCurrencyListUnitPrice"], hour["PricingCurrencyEffectiveCost"]) == (
        "USD",
        D("21.96"),
        D("21.96"),
    )
    assert (volume["PricingCurrency"], volume["PricingCurrencyEffectiveCost"]) == (None, None)
    assert [r["CommitmentDiscountCategory"] for r in rows] == [None, None, None]


def test_capacity_reservation_lines() -> None:
    reservation = "arn:aws:ec2:us-east-1:111122223333:capacity-reservation/cr-0123456789abcdef0"
    rows = normalize(
        [
            p4d_hour("Usage", 21.96, capacity_reservation_capacity_reservation_a_r_n=reservation),
            p4d_hour(
                "Usage",
                21.96,
                line_item_usage_type="USE1-Reservation:p4d.24xlarge",
                capacity_reservation_capacity_reservation_a_r_n=reservation,
                capacity_reservation_capacity_reservation_status="Unused",
            ),
            p4d_hour("Usage", 21.96),
        ]
    )
    assert [(r["CapacityReservationId"], r["CapacityReservationStatus"]) for r in rows] == [
        (reservation, "Used"),
        (reservation, "Unused"),
        (None, None),
    ]


@pytest.mark.parametrize(
    ("unit", "focus"),
    [
        ("Hrs", "Hours"),
        ("GB-Mo", "GB-Months"),
        ("DPU-Hour", "DPU-Hours"),
        ("ACU-Hr", "ACU-Hours"),
        ("Requests", "Requests"),
        ("GB", "GB"),
        ("vCPU-Hours", "vCPU-Hours"),
        ("gibibyte month", "GiB-Months"),
        ("byte-seconds", "B-Seconds"),
        ("seconds", "Seconds"),
        (" ", None),
        (None, None),
    ],
)
def test_units_map_onto_focus_units(unit: str | None, focus: str | None) -> None:
    from pipelines.warehouse.sql import read_sql

    with duckdb.connect() as conn:
        conn.execute(read_sql("staging/macros"))
        assert conn.execute("select focus_unit($unit)", {"unit": unit}).fetchone() == (focus,)


def test_a_load_counts_the_unused_rows_apart_and_reconciles_to_zero(
    warehouse: duckdb.DuckDBPyConnection, tmp_path: Path
) -> None:
    from pipelines.ingest.load import replace_period
    from pipelines.sources.base import PeriodBatch
    from pipelines.warehouse.connection import create_view

    lines = [
        line(
            "SavingsPlanRecurringFee",
            24.0,
            line_item_product_code="ComputeSavingsPlans",
            savings_plan_savings_plan_a_r_n=SP_ARN,
            savings_plan_total_commitment_to_date=24.0,
            savings_plan_used_commitment=20.0,
        ),
        *ri_month(),
    ]
    rows = [{name: entry.get(name) for name in COLUMNS} for entry in lines]
    export = tmp_path / "delivery.parquet"
    pl.DataFrame(rows, schema=COLUMNS).with_columns(
        pl.lit("111122223333").alias("bill_payer_account_id"),
        pl.lit("111122223333").alias("line_item_usage_account_id"),
        pl.lit("USD").alias("line_item_currency_code"),
        pl.lit(PERIOD_START).alias("bill_billing_period_start_date"),
        pl.lit(PERIOD_END).alias("bill_billing_period_end_date"),
    ).write_parquet(export)
    mapped, raw_rows, raw_billed = cur2.read_delivery(
        [export],
        [str(export)],
        source_name="aws",
        source_format="aws_cur2",
        billing_period=PERIOD_START.date(),
        execution_id="e1",
        category_rules=read_category_rules(),
        ingested_at=datetime(2026, 11, 1),
    )
    batch = PeriodBatch("aws", "aws_cur2", PERIOD_START.date(), "e1", (str(export),), raw_rows, raw_billed, mapped)
    replace_period(warehouse, batch)
    create_view(warehouse, "marts/reconciliation")
    # 4 raw lines (SP fee, RI usage, RIFee, RI upfront fee) + the SP fee's and the RIFee's Unused rows
    assert warehouse.execute(
        "select raw_rows, derived_rows, focus_rows, rows_raw_focus_diff, raw_billed_cost, focus_billed_cost, "
        "billed_raw_focus_diff, focus_effective_cost from reconciliation"
    ).fetchall() == [(4, 2, 6, 0, D("14064"), D("14064"), D("0"), D("413.5"))]


def test_a_purchase_without_a_unit_counts_units_and_a_credit_has_no_quantity() -> None:
    month = (PERIOD_START, PERIOD_END)
    rows = normalize(
        [
            line("Fee", 1200.0, usage=month, line_item_product_code="AWSSupportBusiness", line_item_usage_amount=1.0),
            line("Credit", -50.0, usage=month, line_item_usage_amount=1.0),
        ]
    )
    assert [(r["PricingQuantity"], r["PricingUnit"], r["x_ProviderPricingUnit"]) for r in rows] == [
        (D("1"), "Units", None),
        (None, None, None),
    ]
    # FOCUS: a purchase has a contracted unit price; AWS gives the fee no rate, its quantity is 1
    assert [r["ContractedUnitPrice"] for r in rows] == [D("1200"), None]
    assert rows[0]["ServiceSubcategory"] == "Support"


def test_sagemaker_and_current_families_have_gpu_hours() -> None:
    rows = normalize(
        [
            p4d_hour(
                "Usage",
                2 * 55.04,
                line_item_product_code="AmazonSageMaker",
                line_item_usage_type="USE1-Train:ml.p5.48xlarge",
                line_item_usage_amount=2.0,
                product_instance_type="ml.p5.48xlarge",
            ),
            p4d_hour(
                "Usage",
                1.0,
                line_item_usage_type="USE1-BoxUsage:p6-b200.48xlarge",
                product_instance_type="p6-b200.48xlarge",
            ),
            p4d_hour(
                "Usage", 1.0, line_item_usage_type="USE1-BoxUsage:g6e.12xlarge", product_instance_type="g6e.12xlarge"
            ),
            p4d_hour(
                "Usage", 1.0, line_item_usage_type="USE1-BoxUsage:trn2.48xlarge", product_instance_type="trn2.48xlarge"
            ),
            # a SageMaker training volume is not GPU usage
            line(
                "Usage",
                0.5,
                line_item_product_code="AmazonSageMaker",
                line_item_usage_type="USE1-Train:VolumeUsage.gp2",
                line_item_usage_amount=100.0,
                product_instance_type="ml.p5.48xlarge",
            ),
        ]
    )
    assert [(r["x_InstanceType"], r["x_GpuCount"], r["x_GpuHours"]) for r in rows] == [
        ("ml.p5.48xlarge", 8, D(16)),
        ("p6-b200.48xlarge", 8, D(8)),
        ("g6e.12xlarge", 4, D(4)),
        ("trn2.48xlarge", 16, D(16)),
        ("ml.p5.48xlarge", 8, D(0)),
    ]


def test_what_a_product_gives_is_derived_once_per_product(tmp_path: Path) -> None:
    """SkuId, the region, the instance type, its GPUs and SkuPriceDetails are a function of the
    line's product (its SKU and attributes): the mapping derives them once per distinct product
    (`cur2_products`), and three hours of the same instance share one row."""
    hours = [p4d_hour("Usage", 21.96, product_sku="7Q9UXNH3C2MKB6WR", product_vcpu="96") for _ in range(3)]
    volume = line("Usage", 8.0, line_item_usage_type="USE1-EBS:VolumeUsage.gp3", product_sku="D7EGG5W7JDE4SU4A")
    with memory_connection() as conn:
        delivery([*hours, volume], tmp_path).prepare(conn)
        products = conn.execute(
            "select sku_id, region_id, instance_type, gpus, sku_price_details from cur2_products order by sku_id"
        ).fetchall()
    assert [row[:4] for row in products] == [
        ("7Q9UXNH3C2MKB6WR", "us-east-1", "p4d.24xlarge", 8),
        ("D7EGG5W7JDE4SU4A", "us-east-1", None, None),
    ]
    assert json.loads(products[0][4]) == {"InstanceType": "p4d.24xlarge", "CoreCount": 96}
    assert products[1][4] is None
