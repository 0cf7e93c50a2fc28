"""The GCP billing export → FOCUS mapping, pinned on hand-computed rows (NDJSON as Google
writes it: numbers sometimes strings, timestamps like `2026-10-07 00:00:00 UTC`; and Parquet
with BigQuery's Arrow types and older tables' missing fields)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pipelines.sources.delivery import memory_connection
from pipelines.sources.gcp_billing import export_rows
from pipelines.sources.gcp_billing.reader import GcpExportFilesReader
from pipelines.sources.mappings import read_category_rules

VM = "//compute.googleapis.com/projects/ml-train-prod/zones/us-central1-a/instances/7234001"
COMMITMENT_COLUMNS = (
    "CommitmentDiscountId",
    "CommitmentDiscountName",
    "CommitmentDiscountType",
    "CommitmentDiscountCategory",
    "CommitmentDiscountStatus",
    "CommitmentDiscountQuantity",
    "CommitmentDiscountUnit",
    "PricingCategory",
)
UNIT_COLUMNS = (
    "PricingQuantity",
    "PricingUnit",
    "ConsumedQuantity",
    "ConsumedUnit",
    "x_ProviderPricingUnit",
    "x_ProviderConsumedUnit",
)


def row(description: str = "A3 Instance Core running in Americas", **fields: object) -> dict:
    """A regular Compute Engine row of one hour; `fields` replace top-level fields."""
    base = {
        "billing_account_id": "01A2B3-C4D5E6-F7A8B9",
        "service": {"id": "6F81-5844-456A", "description": "Compute Engine"},
        "sku": {"id": "3C8E-91F4-A6B2", "description": description},
        "usage_start_time": "2026-10-07 00:00:00 UTC",
        "usage_end_time": "2026-10-07 01:00:00 UTC",
        "project": {
            "id": "ml-train-prod",
            "number": "482910375566",
            "name": "ml-train-prod",
            "labels": [{"key": "team", "value": "ml-platform"}, {"key": "owner", "value": "project-owner"}],
        },
        "labels": [{"key": "training-run", "value": "llm-3b-pt-gcp"}, {"key": "owner", "value": "carol"}],
        "system_labels": [
            {"key": "compute.googleapis.com/machine_spec", "value": "a3-highgpu-8g"},
            {"key": "compute.googleapis.com/cores", "value": "208"},
        ],
        "location": {"location": "us-central1-a", "country": "US", "region": "us-central1", "zone": "us-central1-a"},
        "resource": {"name": "llm-3b-train-0", "global_name": VM},
        "export_time": "2026-10-07 05:12:09.482113 UTC",
        "cost": 6.136,
        "currency": "USD",
        "currency_conversion_rate": 1,
        "usage": {"amount": 748800, "unit": "seconds", "amount_in_pricing_units": 208, "pricing_unit": "hour"},
        "credits": [],
        "invoice": {"month": "202610"},
        "cost_type": "regular",
        "adjustment_info": None,
        "cost_at_list": 6.136,
        "seller_name": "Google",
    }
    return base | fields


ROWS = {
    "two credits": row(
        "Nvidia H100 80GB GPU running in Americas",
        cost="100.0",
        credits=[
            {
                "name": "Committed use discount: A3 GPUs",
                "amount": -37.0,
                "full_name": None,
                "id": "c1",
                "type": "COMMITTED_USAGE_DISCOUNT",
            },
            {
                "name": "Sustained usage discount",
                "amount": "-5.25",
                "full_name": None,
                "id": "s1",
                "type": "SUSTAINED_USAGE_DISCOUNT",
            },
            {
                "name": "Committed use discount: A3 GPUs",
                "amount": -1.5,
                "full_name": None,
                "id": "c2",
                "type": "COMMITTED_USAGE_DISCOUNT",
            },
        ],
        usage={"amount": 28800, "unit": "seconds", "amount_in_pricing_units": 8, "pricing_unit": "hour"},
    ),
    "tax": row(
        "Sales tax",
        service={"id": "B1C4", "description": "Invoice"},
        cost=8.42,
        cost_type="tax",
        usage={"amount": 0, "unit": None, "amount_in_pricing_units": 0, "pricing_unit": None},
    ),
    "correction": row(
        cost=-2.5,
        cost_type="adjustment",
        adjustment_info={
            "id": "adj-1",
            "description": "Usage correction",
            "mode": "PARTIAL_CORRECTION",
            "type": "USAGE_CORRECTION",
        },
    ),
    "goodwill": row(
        "Standard Storage US Multi-region",
        service={"id": "95FF", "description": "Cloud Storage"},
        cost=-120.0,
        cost_type="adjustment",
        adjustment_info={
            "id": "adj-2",
            "description": "Goodwill",
            "mode": "MANUAL_ADJUSTMENT",
            "type": "GENERAL_ADJUSTMENT",
        },
    ),
    "rounding": row("Rounding error", cost=0.000001, cost_type="rounding_error"),
    "yen": row(cost=1234.0, currency="JPY", currency_conversion_rate=146.2836, invoice={"month": "202612"}),
    "gpu partial hour": row(
        "Nvidia H100 80GB GPU running in Americas",
        cost="4.4087",
        usage={"amount": "5400.5", "unit": "seconds", "amount_in_pricing_units": 1.5, "pricing_unit": "hour"},
        price={"effective_price": "2.9391", "tier_start_amount": "0", "unit": "hour", "pricing_unit_quantity": 1},
    ),
    # the commitment c1 of 4 GPU-hours in the hour "two credits" used 8 × 38.5 / 100 = 3.08 of
    "gpu commitment fee": row(
        "Commitment v1: H100 GPU in Americas for 1 Year",
        cost=50.0,
        usage={"amount": 14400, "unit": "seconds", "amount_in_pricing_units": 4, "pricing_unit": "hour"},
        resource={"name": "c1", "global_name": None},
    ),
    "no resource": row(
        "Log Volume", service={"id": "5490", "description": "Cloud Logging"}, resource=None, labels=[], system_labels=[]
    ),
}


def map_export(files: list[Path], staging: Path) -> tuple[list[dict], dict]:
    """The export files' rows as FOCUS rows, every invoice month, in file and line order; and
    each month's raw control totals (rows, BilledCost)."""
    reader = GcpExportFilesReader("gcp", files, staging)
    staging.mkdir(parents=True, exist_ok=True)
    rows, totals = [], {}
    for period in reader.billing_periods():
        batch = reader.batch(period, read_category_rules(), datetime(2026, 11, 1))
        staged = staging / f"{period}.parquet"
        batch.mapped.stage(staged)
        rows += pl.read_parquet(staged).to_dicts()
        totals[period] = (batch.raw_rows, batch.raw_billed_cost)
    return sorted(rows, key=line_order), totals


def line_order(line: dict) -> tuple[int, str]:
    """A line's row in its file, then its derived suffix (`|used`, `|unused`; none first)."""
    key = line["x_LineItemKey"].removesuffix("|used").removesuffix("|unused")
    return int(key.rsplit("|", 1)[1]), line["x_LineItemKey"][len(key) :]


@pytest.fixture(scope="module")
def mapped(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict]:
    folder = tmp_path_factory.mktemp("gcp")
    file = folder / "gcp_billing_export_resource_v1_01A2B3_C4D5E6_F7A8B9_20261007.jsonl"
    file.write_text("\n".join(json.dumps(r) for r in ROWS.values()) + "\n")
    rows, _ = map_export([file], folder / "staging")
    parents = [line for line in rows if not line["x_LineItemKey"].endswith(("|used", "|unused"))]
    derived = {
        f"{name} {line['x_LineItemKey'].rsplit('|', 1)[1]}": line
        for name, parent in zip(ROWS, parents)
        for line in rows
        if line["x_LineItemKey"] in (parent["x_LineItemKey"] + "|used", parent["x_LineItemKey"] + "|unused")
    }
    return dict(zip(ROWS, parents)) | derived


def credits(line: dict) -> dict[str, Decimal]:
    return {entry["key"]: entry["value"] for entry in line["x_Credits"]}


def test_net_cost_adds_every_credit_and_keeps_them_per_type(mapped: dict[str, dict]) -> None:
    line = mapped["two credits"]
    assert line["ContractedCost"] == Decimal("100")
    assert line["BilledCost"] == line["EffectiveCost"] == Decimal("56.25")  # 100 − 37 − 5.25 − 1.5
    assert credits(line) == {"COMMITTED_USAGE_DISCOUNT": Decimal("-38.5"), "SUSTAINED_USAGE_DISCOUNT": Decimal("-5.25")}
    assert (line["ChargeCategory"], line["ChargeClass"]) == ("Usage", None)
    assert credits(mapped["tax"]) == {}


def test_charge_category_and_class_from_cost_type_and_adjustment_info(mapped: dict[str, dict]) -> None:
    got = {
        name: (mapped[name]["ChargeCategory"], mapped[name]["ChargeClass"], mapped[name]["BilledCost"])
        for name in ("tax", "correction", "goodwill", "rounding")
    }
    assert got == {
        "tax": ("Tax", None, Decimal("8.42")),
        "correction": ("Adjustment", "Correction", Decimal("-2.5")),
        "goodwill": ("Adjustment", None, Decimal("-120")),
        "rounding": ("Adjustment", None, Decimal("0.000001")),
    }
    assert mapped["tax"]["x_CostCategory"] == "tax"


def test_a_non_usd_row_keeps_its_currency_and_rate(mapped: dict[str, dict]) -> None:
    line = mapped["yen"]
    assert (line["BillingCurrency"], line["BilledCost"], line["x_CurrencyConversionRate"]) == (
        "JPY",
        Decimal("1234"),
        Decimal("146.2836"),
    )
    assert mapped["two credits"]["x_CurrencyConversionRate"] == Decimal("1")


def test_billing_period_is_the_invoice_month_in_pacific_time(mapped: dict[str, dict]) -> None:
    october, december = mapped["two credits"], mapped["yen"]
    assert (october["BillingPeriodStart"], october["BillingPeriodEnd"]) == (
        datetime(2026, 10, 1, 7),
        datetime(2026, 11, 1, 7),
    )
    assert (december["BillingPeriodStart"], december["BillingPeriodEnd"]) == (
        datetime(2026, 12, 1, 8),
        datetime(2027, 1, 1, 8),
    )
    assert october["ChargePeriodStart"] == datetime(2026, 10, 7)


def test_gpu_hours_only_from_gpu_sku_usage_seconds(mapped: dict[str, dict]) -> None:
    hours = {name: line["x_GpuHours"] for name, line in mapped.items()}
    assert hours == {
        "two credits": Decimal("8"),  # 28800 s
        "tax": Decimal(0),
        "correction": Decimal(0),
        "goodwill": Decimal(0),
        "rounding": Decimal(0),
        "yen": Decimal(0),  # an instance-core SKU of the same VM: cost, no GPU-hours
        "gpu partial hour": Decimal("1.5001388889"),  # 5400.5 s / 3600, rounded at 10 decimals
        "gpu commitment fee": Decimal(0),
        "gpu commitment fee used": Decimal(0),
        "gpu commitment fee unused": Decimal(0),
        "no resource": Decimal(0),
    }
    core = mapped["correction"]
    assert (core["x_InstanceType"], core["x_GpuCount"], core["x_CostCategory"]) == ("a3-highgpu-8g", 8, "compute")


def test_covered_usage_names_its_committed_use_discount(mapped: dict[str, dict]) -> None:
    line = mapped["two credits"]
    got = {column: line[column] for column in COMMITMENT_COLUMNS}
    assert got == {
        "CommitmentDiscountId": "c1",  # the first CUD credit's id
        "CommitmentDiscountName": "Committed use discount: A3 GPUs",
        "CommitmentDiscountType": "Committed Use Discount",
        "CommitmentDiscountCategory": "Usage",  # resource-based; DOLLAR_BASE credits are Spend
        "CommitmentDiscountStatus": "Used",
        "CommitmentDiscountQuantity": Decimal("3.08"),  # 8 hours × (37 + 1.5) / 100 of the cost
        "CommitmentDiscountUnit": "Hours",
        "PricingCategory": "Committed",
    }
    plain = mapped["gpu partial hour"]
    assert {column: plain[column] for column in COMMITMENT_COLUMNS} == dict.fromkeys(COMMITMENT_COLUMNS) | {
        "PricingCategory": "Standard"
    }


def test_a_commitment_fee_is_a_purchase_amortized_onto_used_and_unused_rows(mapped: dict[str, dict]) -> None:
    fee, used, unused = (mapped[f"gpu commitment fee{part}"] for part in ("", " used", " unused"))
    assert (fee["ChargeCategory"], fee["ChargeFrequency"], fee["BilledCost"], fee["EffectiveCost"]) == (
        "Purchase",
        "Recurring",
        Decimal("50"),
        Decimal("0"),
    )
    assert (fee["CommitmentDiscountId"], fee["CommitmentDiscountQuantity"], fee["CommitmentDiscountStatus"]) == (
        "c1",
        Decimal("4"),
        None,
    )
    assert used["x_LineItemKey"] == fee["x_LineItemKey"] + "|used"
    assert unused["x_LineItemKey"] == fee["x_LineItemKey"] + "|unused"
    # 3.08 of 4 hours used: 50 × 3.08 / 4 = 38.5, the rest unused
    got = [
        (line["ChargeCategory"], line["CommitmentDiscountStatus"], line["CommitmentDiscountQuantity"])
        + (line["ConsumedQuantity"], line["BilledCost"], line["EffectiveCost"])
        for line in (used, unused)
    ]
    assert got == [
        ("Usage", "Used", Decimal("3.08"), Decimal("3.08"), Decimal(0), Decimal("38.5")),
        ("Usage", "Unused", Decimal("0.92"), None, Decimal(0), Decimal("11.5")),
    ]
    assert sum(line["EffectiveCost"] for line in (fee, used, unused)) == fee["BilledCost"]


def test_quantities_and_units_in_focus_form(mapped: dict[str, dict]) -> None:
    def units(name: str) -> tuple:
        line = mapped[name]
        return tuple(line[column] for column in UNIT_COLUMNS)

    assert units("two credits") == (Decimal(8), "Hours", Decimal(28800), "Seconds", "hour", "seconds")
    # a tax has no quantity, an adjustment no consumption
    assert units("tax") == (None, None, None, None, None, None)
    assert units("correction")[2:4] == (None, None)
    tax = mapped["tax"]
    assert (tax["SkuId"], tax["SkuPriceId"], tax["SkuMeter"], tax["PricingCategory"]) == (None, None, None, None)


def test_price_region_account_types_and_subcategory(mapped: dict[str, dict]) -> None:
    line = mapped["gpu partial hour"]
    assert (line["ContractedUnitPrice"], line["SkuPriceId"], line["SkuPriceDetails"]) == (
        Decimal("2.9391"),
        "3C8E-91F4-A6B2/tier/0",
        '{"x_TierStartAmount": 0}',
    )
    assert (line["RegionName"], line["BillingAccountType"], line["SubAccountType"], line["SkuMeter"]) == (
        "Iowa",
        "Billing Account",
        "Project",
        "Nvidia H100 80GB GPU running in Americas",
    )
    assert mapped["two credits"]["ContractedUnitPrice"] is None  # a standard export has no price
    subcategories = {name: mapped[name]["ServiceSubcategory"] for name in ("two credits", "goodwill", "no resource")}
    assert subcategories == {
        "two credits": "Virtual Machines",
        "goodwill": "Object Storage",
        "no resource": "Observability",
    }


def test_tags_resource_and_system_labels(mapped: dict[str, dict]) -> None:
    line = mapped["two credits"]
    tags = {entry["key"]: entry["value"] for entry in line["Tags"]}
    assert tags == {"training-run": "llm-3b-pt-gcp", "owner": "carol", "team": "ml-platform"}
    assert {entry["key"]: entry["value"] for entry in line["x_SystemLabels"]} == {
        "compute.googleapis.com/machine_spec": "a3-highgpu-8g",
        "compute.googleapis.com/cores": "208",
    }
    assert (line["ResourceId"], line["ResourceName"]) == (VM, "llm-3b-train-0")
    assert mapped["no resource"]["ResourceId"] is None
    assert {entry["key"]: entry["value"] for entry in mapped["no resource"]["Tags"]} == {
        "team": "ml-platform",
        "owner": "project-owner",
    }


def test_parquet_with_bigquery_types_and_missing_newer_fields(tmp_path: Path) -> None:
    """The shape a BigQuery query returns: doubles, UTC timestamps, nested records; an older table
    without adjustment_info, cost_at_list, seller_name, resource and credit types."""
    table = pa.table(
        {
            "billing_account_id": ["01A2B3-C4D5E6-F7A8B9"],
            "service": [{"id": "6F81", "description": "Compute Engine"}],
            "sku": [{"id": "9A2B", "description": "Nvidia H100 80GB GPU running in Americas"}],
            "usage_start_time": pa.array([datetime(2026, 10, 31, 23, tzinfo=UTC)], pa.timestamp("us", "UTC")),
            "usage_end_time": pa.array([datetime(2026, 11, 1, 0, tzinfo=UTC)], pa.timestamp("us", "UTC")),
            "export_time": pa.array([datetime(2026, 11, 1, 4, 0, 0, 1, tzinfo=UTC)], pa.timestamp("us", "UTC")),
            "cost": [78.372],
            "currency": ["USD"],
            "usage": [{"amount": 28800.0, "unit": "seconds", "amount_in_pricing_units": 8.0, "pricing_unit": "hour"}],
            "credits": [[{"name": "Committed use discount: A3 GPUs", "amount": -28.99764}]],
            "invoice": [{"month": "202610"}],
            "cost_type": ["regular"],
        }
    )
    file = tmp_path / "old.parquet"
    pq.write_table(table, file)
    (line,), totals = map_export([file], tmp_path / "staging")
    assert line["BilledCost"] == Decimal("49.37436")
    assert credits(line) == {"Committed use discount: A3 GPUs": Decimal("-28.99764")}
    assert (line["ChargePeriodStart"], line["ResourceId"], line["ListCost"], line["ChargeClass"]) == (
        datetime(2026, 10, 31, 23),
        None,
        None,
        None,
    )
    assert line["x_GpuHours"] == Decimal("8")
    assert totals == {datetime(2026, 10, 1).date(): (1, Decimal("49.37436"))}


def test_snapshot_keys_are_stable_and_unique_for_identical_rows(tmp_path: Path) -> None:
    """BigQuery rows have no id and come in no fixed order: keys are content hashes, numbered
    among identical rows, so the same snapshot read twice in another order keys the same."""
    twin = row(cost=1.5)
    table = pl.DataFrame([twin, twin, row(cost=2.5)]).to_arrow()
    forward, backward = tmp_path / "a.parquet", tmp_path / "b.parquet"
    pq.write_table(table, forward)
    pq.write_table(table.take([2, 1, 0]), backward)
    keys = []
    for file in (forward, backward):
        export_rows.key_snapshot(file, "p.d.t", file.with_suffix(".keyed.parquet"))
        keys.append(sorted(pl.read_parquet(file.with_suffix(".keyed.parquet"))["_line_key"].to_list()))
    assert keys[0] == keys[1]
    assert len(set(keys[0])) == 3


def test_what_a_sku_gives_is_derived_once_per_sku(tmp_path: Path) -> None:
    """ChargeCategory, the cost category, the FOCUS units and whether the usage is GPU-hours are a
    function of the SKU (with its service, cost type, units and price): the mapping derives them
    once per distinct SKU (`gcp_skus`), and three hours of the same GPU SKU share one row."""
    file = tmp_path / "gcp_billing_export_resource_v1_01A2B3_C4D5E6_F7A8B9_20261007.jsonl"
    gpu_hours = [ROWS["gpu partial hour"]] * 3
    file.write_text("\n".join(json.dumps(r) for r in [*gpu_hours, ROWS["tax"]]) + "\n")
    reader = GcpExportFilesReader("gcp", [file], tmp_path / "staging")
    (period,) = reader.billing_periods()
    delivery = reader.batch(period, read_category_rules(), datetime(2026, 11, 1)).mapped
    with memory_connection() as conn:
        delivery.prepare(conn)
        skus = conn.execute(
            "select sku_description, charge_category, cost_category, focus_pricing_unit, focus_usage_unit, "
            "is_gpu_usage from gcp_skus order by sku_description"
        ).fetchall()
    assert skus == [
        ("Nvidia H100 80GB GPU running in Americas", "Usage", "compute", "Hours", "Seconds", True),
        ("Sales tax", "Tax", "tax", None, None, False),
    ]
