"""One `focus` source through a whole run: GPU-hours from instance types in SkuPriceDetails, Azure's
x_SkuDetails, the ChargeDescription AWS writes and the config's own table, through to run_costs and
the usage and rate split of the run's budget variance; a custom attribution dimension
(`environment`) from the tags in cost_allocations, run_costs and the run's report."""

import csv
import json
from decimal import Decimal
from pathlib import Path

import pytest

from pipelines.config import load_config
from pipelines.config_rules import ConfigError
from pipelines.nightly import run_nightly
from tests.support import write_config
from tests.support.lake import reading

RUN = "llm-h100"
# p5.48xlarge on demand in us-east-1: 55.04 USD an hour for 8 H100s, 6.88 USD a GPU-hour.
P5_HOUR = Decimal("55.04")
BASE = {
    "BillingCurrency": "USD",
    "BillingPeriodStart": "2024-09-01 00:00:00",
    "BillingPeriodEnd": "2024-10-01 00:00:00",
    "ChargeCategory": "Usage",
    "ServiceCategory": "Compute",
    "ConsumedUnit": "Hours",
    "CommitmentDiscountStatus": "NULL",
    "SkuPriceDetails": "NULL",
    "x_SkuDetails": "NULL",
    "x_InstanceType": "NULL",
    "Tags": json.dumps({"training_run": RUN}),
}


PROD = json.dumps({"training_run": RUN, "env": "prod"})
DEV = json.dumps({"TrainingRun": RUN, "Environment": " dev "})


def line(day: int, provider: str, description: str, hours: str, cost: Decimal, **columns: str) -> dict:
    return {
        **BASE,
        "ChargePeriodStart": f"2024-09-{day:02d} 00:00:00",
        "ChargePeriodEnd": f"2024-09-{day + 1:02d} 00:00:00",
        "ProviderName": provider,
        "ChargeDescription": description,
        "ConsumedQuantity": hours,
        "BilledCost": str(cost),
        "EffectiveCost": str(cost),
        **columns,
    }


def bill() -> list[dict]:
    p5 = json.dumps({"InstanceType": "p5.48xlarge", "CoreCount": 192})
    return [
        # 4 days of one p5.48xlarge: 96 instance hours x 8 GPUs = 768 GPU-hours
        *(line(day, "AWS", "p5 capacity", "24", 24 * P5_HOUR, SkuPriceDetails=p5, Tags=PROD) for day in (2, 3, 4, 5)),
        # SageMaker training on ml.p5.48xlarge, named only by its description: 2 h x 8 = 16
        line(6, "AWS", "$55.04 per Hour for Training on ml.p5.48xlarge", "2", 2 * P5_HOUR),
        # the real FOCUS sample's wording of a g5.4xlarge (1 A10G): 3 h x 1 = 3
        line(6, "AWS", "$1.624 per On Demand Linux g5.4xlarge Instance Hour", "3", Decimal("4.872"), Tags=DEV),
        # Azure: the VM size in x_SkuDetails, 1 h x 8 = 8
        line(
            7,
            "Microsoft",
            "Virtual Machines NDH100v5 Series",
            "1",
            Decimal("98.32"),
            x_SkuDetails=json.dumps({"ServiceType": "Standard_ND96isr_H100_v5"}),
        ),
        # a type of the config's own table: 5 h x 4 = 20
        line(7, "Example Cloud", "gpu box", "5", Decimal("40"), x_InstanceType="Lab-Box-4"),
        # none of these is GPU usage: storage of the run, a p5 reservation's unused hours, a CPU instance
        line(
            8, "AWS", "$0.08 per GB-month of gp3", "100", Decimal("8"), ConsumedUnit="GB-Mo", ServiceCategory="Storage"
        ),
        line(8, "AWS", "unused reservation", "10", Decimal("0"), SkuPriceDetails=p5, CommitmentDiscountStatus="Unused"),
        line(8, "AWS", "$0.34 per On Demand Linux c5.2xlarge Instance Hour", "24", Decimal("8.16")),
    ]


BUDGET = f"""\
training_run: {RUN}
currency: USD
window: {{start: 2024-09-01, end: 2024-10-01}}
model: {{parameters: 1e9, tokens: 3e11, gpu_peak_tflops: 1000, mfu: 0.5, overhead: 0, gpus: 8,
        gpu_hour_price: 6.5}}
thresholds: {{warning: 0.8, over: 1.0}}
"""


@pytest.fixture(scope="module")
def lake(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("focus-gpu")
    (root / "exports").mkdir()
    rows = bill()
    with (root / "exports" / "bill.csv").open("w", newline="") as handle:
        writer = csv.DictWriter(handle, list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    (root / "budgets").mkdir()
    (root / "budgets" / f"{RUN}.yaml").write_text(BUDGET)
    config = write_config(
        root,
        "sources:\n  - {name: files, kind: focus, path: exports}\n"
        "budgets: budgets\n"
        "gpu_instance_types: {lab-box-4: 4}\n"
        "attribution:\n  dimensions: {environment: [env, environment]}\n",
    )
    run_nightly(config, echo=lambda text: None)
    return root


def test_gpu_hours_per_line_are_instance_hours_times_gpus(lake: Path) -> None:
    with reading(lake) as conn:
        rows = conn.execute(
            "select ChargeDescription, x_InstanceType, x_GpuCount, x_GpuHours from focus_line_items "
            "order by ChargePeriodStart, ChargeDescription"
        ).fetchall()
    assert [(instance, gpus, hours) for _, instance, gpus, hours in rows] == [
        *[("p5.48xlarge", 8, Decimal(192))] * 4,
        ("g5.4xlarge", 1, Decimal(3)),
        ("ml.p5.48xlarge", 8, Decimal(16)),
        ("Standard_ND96isr_H100_v5", 8, Decimal(8)),
        ("Lab-Box-4", 4, Decimal(20)),
        (None, None, Decimal(0)),
        ("c5.2xlarge", None, Decimal(0)),
        ("p5.48xlarge", 8, Decimal(0)),
    ]


def test_run_costs_and_the_variance_split_use_the_gpu_hours(lake: Path) -> None:
    with reading(lake) as conn:
        (gpu_hours,) = conn.execute(
            "select sum(gpu_hours) from run_costs where training_run = $run and cost_category = 'compute'",
            {"run": RUN},
        ).fetchone()
        variance = conn.execute(
            "select actual_cost, actual_gpu_hours, actual_rate, estimated_gpu_hours, estimated_rate, "
            "rate_variance, usage_variance, variance from budget_variance "
            "where training_run = $run and cost_category = 'compute'",
            {"run": RUN},
        ).fetchone()
    assert gpu_hours == 768 + 16 + 3 + 8 + 20
    actual_cost, actual_gpu_hours, actual_rate, estimated_gpu_hours, estimated_rate, rate, usage, total = variance
    compute_cost = (96 + 2) * P5_HOUR + Decimal("4.872") + Decimal("98.32") + 40 + Decimal("8.16")
    assert (actual_cost, actual_gpu_hours, estimated_gpu_hours, estimated_rate) == (compute_cost, 815, 1000, 6.5)
    # about the real price of an H100 hour, not the cost over 0 GPU-hours
    assert Decimal(6) < actual_rate < Decimal(8)
    assert rate + usage == total
    assert usage == (815 - 1000) * Decimal("6.5")


def test_a_configured_table_file_with_a_bad_row_is_refused(tmp_path: Path) -> None:
    (tmp_path / "gpus.csv").write_text("instance_type,gpus\nlab-box-4,4\nlab-box-x,eight\n")
    config = write_config(tmp_path, "gpu_instance_types: gpus.csv\n")
    with pytest.raises(ConfigError, match=r"gpus\.csv: row 3: gpus: 'eight' is not a positive whole number"):
        load_config(config)
    (tmp_path / "gpus.csv").write_text("instance_type,gpus\nlab-box-4,4\n")
    assert load_config(config).gpu_instance_table() == {"lab-box-4": 4}


def test_a_custom_dimension_from_tags_reaches_allocations_run_costs_and_the_report(lake: Path) -> None:
    with reading(lake) as conn:
        by_environment = conn.execute(
            "select custom_dimensions['environment'], sum(effective_cost) from cost_allocations "
            "group by all order by all"
        ).fetchall()
        run_rows = conn.execute(
            "select distinct training_run, custom_dimensions from run_costs order by all"
        ).fetchall()
        diffs = conn.execute(
            "select billed_raw_focus_diff, billed_focus_allocated_diff, effective_focus_allocated_diff "
            "from reconciliation"
        ).fetchall()
    others = 2 * P5_HOUR + Decimal("98.32") + 40 + 8 + Decimal("8.16")
    assert by_environment == [("dev", Decimal("4.872")), ("prod", 96 * P5_HOUR), (None, others)]
    # the run's value is the one carrying most of its spend
    assert run_rows == [(RUN, {"environment": "prod"})]
    assert diffs == [(0, 0, 0)]
    (report,) = (lake / ".runledger" / "reports").glob(f"**/{RUN}*/report.md")
    text = report.read_text()
    assert "- **environment:** prod" in text
    assert "**Warning** · environment prod" in text
