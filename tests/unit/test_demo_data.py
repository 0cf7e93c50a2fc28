"""The demo data set: deterministic, laid out like real exports, internally consistent, and telling
the story the demo promises (7B over budget, 13B under, 3B close)."""

from __future__ import annotations

import fnmatch
import functools
import json
from collections import defaultdict
from datetime import date, datetime
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml

from pipelines.demo import write_demo

RUNS = {"llm-7b-pt-r1", "llm-13b-ft-r2", "llm-3b-pt-gcp"}
PERIODS = {"2026-10": date(2026, 10, 1), "2026-11": date(2026, 11, 1)}
TOLERANCE = 1e-6
INSTANCE_USAGE_TYPES = {"Usage", "SavingsPlanCoveredUsage", "DiscountedUsage"}
GPUS_PER_NODE = 8


@pytest.fixture(scope="module")
def demo_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("demo")
    write_demo(root)
    return root


def _export_root(root: Path) -> Path:
    return root / ".runledger/demo/aws/cur2-demo"


def _manifest(root: Path, period: str) -> dict:
    path = _export_root(root) / "metadata" / f"BILLING_PERIOD={period}" / "cur2-demo-Manifest.json"
    return json.loads(path.read_text())


def _listed_files(root: Path, period: str) -> list[Path]:
    """The manifest's s3:// data files, as paths in the local copy of the export."""
    return [_export_root(root) / "data" / uri.split("/data/", 1)[1] for uri in _manifest(root, period)["dataFiles"]]


def _cur_rows(files: list[Path]) -> list[dict]:
    return [row for file in files for row in pq.read_table(file).to_pylist()]


@functools.cache
def _latest_cur_rows(root: Path, period: str) -> list[dict]:
    return _cur_rows(_listed_files(root, period))


@functools.cache
def _gcp_rows(root: Path) -> list[dict]:
    files = sorted((root / ".runledger/demo/gcp").glob("*.jsonl"))
    return [json.loads(line) for file in files for line in file.read_text().splitlines()]


def _net_cost(row: dict) -> float:
    return float(row["cost"]) + sum(credit["amount"] for credit in row["credits"])


def _read_yaml(path: Path) -> dict:
    return yaml.safe_load(path.read_text())


def _amortized_cost(row: dict) -> float:
    """EffectiveCost of a CUR line by the rule in BILLING.md (no discounts in the demo)."""
    line_type = row["line_item_line_item_type"]
    if line_type == "SavingsPlanCoveredUsage":
        return row["savings_plan_savings_plan_effective_cost"]
    if line_type == "SavingsPlanRecurringFee":
        return row["savings_plan_total_commitment_to_date"] - row["savings_plan_used_commitment"]
    if line_type in ("SavingsPlanNegation", "SavingsPlanUpfrontFee"):
        return 0.0
    if line_type == "DiscountedUsage":
        return row["reservation_effective_cost"]
    if line_type == "RIFee":
        return (
            row["reservation_unused_amortized_upfront_fee_for_billing_period"] + row["reservation_unused_recurring_fee"]
        )
    return row["line_item_unblended_cost"]


def _estimated_compute(budget: dict) -> tuple[float, float]:
    """(GPU-hours, cost) of the resource model (docs/semantics.md)."""
    model = budget["model"]
    flops = 6 * model["parameters"] * model["tokens"]
    gpu_hours = flops / (model["gpu_peak_tflops"] * 1e12 * model["mfu"] * 3600) * (1 + model["overhead"])
    return gpu_hours, gpu_hours * model["gpu_hour_price"]


def _registry(root: Path) -> dict[str, dict]:
    return {run["id"]: run for run in _read_yaml(root / ".runledger/demo/runs.yaml")["runs"]}


def _aws_actual_compute(root: Path, run: dict) -> tuple[float, float]:
    """(GPU-hours, amortized cost) of the instance-hours whose resource matches the run's patterns."""
    gpu_hours = cost = 0.0
    for period in PERIODS:
        for row in _latest_cur_rows(root, period):
            resource = row["line_item_resource_id"] or ""
            is_instance_hour = "BoxUsage" in (row["line_item_usage_type"] or "")
            if is_instance_hour and any(fnmatch.fnmatchcase(resource, pattern) for pattern in run["resources"]):
                cost += _amortized_cost(row)
                if row["line_item_line_item_type"] in INSTANCE_USAGE_TYPES:
                    gpu_hours += row["line_item_usage_amount"] * GPUS_PER_NODE
    return gpu_hours, cost


def test_a_second_call_writes_identical_bytes(demo_root: Path, tmp_path: Path) -> None:
    assert write_demo(tmp_path) == tmp_path / "runledger.yaml"
    first_files = sorted(p.relative_to(demo_root) for p in demo_root.rglob("*") if p.is_file())
    second_files = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*") if p.is_file())
    assert first_files == second_files
    assert all((demo_root / name).read_bytes() == (tmp_path / name).read_bytes() for name in first_files)


def test_only_the_config_sits_in_root_and_it_points_at_existing_files(demo_root: Path) -> None:
    assert sorted(p.name for p in demo_root.iterdir()) == [".runledger", "runledger.yaml"]
    config = _read_yaml(demo_root / "runledger.yaml")
    named = [source.get("uri") or source.get("path") for source in config["sources"]]
    named += [config["attribution"]["runs"], config["budgets"]]
    assert all((demo_root / path).exists() and path.startswith(".runledger/demo/") for path in named)
    assert {source["kind"] for source in config["sources"]} == {
        "aws_cur",
        "gcp_billing",
        "run_events",
        "slurm",
        "prometheus",
    }


def test_each_manifest_lists_only_its_latest_execution(demo_root: Path) -> None:
    for period in PERIODS:
        manifest = _manifest(demo_root, period)
        listed = _listed_files(demo_root, period)
        assert len(listed) == 2 and all(path.is_file() for path in listed)
        assert all(f"/data/BILLING_PERIOD={period}/" in uri for uri in manifest["dataFiles"])
        assert all(uri.startswith("s3://runledger-demo-billing/cur/cur2-demo/data/") for uri in manifest["dataFiles"])
        executions = {path.parent for path in listed}
        assert len(executions) == 1
        assert manifest["executionId"] in executions.pop().name
        assert manifest["exportArn"].startswith("arn:aws:bcm-data-exports:us-east-1:111122223333:export/cur2-demo-")
        assert manifest["additionalOutputFiles"] == []
        assert [column["name"] for column in manifest["columns"]] == pq.read_schema(listed[0]).names


def test_october_keeps_an_older_smaller_execution_the_manifest_ignores(demo_root: Path) -> None:
    partition = _export_root(demo_root) / "data" / "BILLING_PERIOD=2026-10"
    listed = set(_listed_files(demo_root, "2026-10"))
    older = [folder for folder in partition.iterdir() if folder not in {path.parent for path in listed}]
    assert len(older) == 1
    older_files = sorted(older[0].glob("*.parquet"))
    assert older_files and not listed & set(older_files)
    assert older[0].name < next(iter(listed)).parent.name  # the execution folder names start with their time
    older_rows, latest_rows = _cur_rows(older_files), _latest_cur_rows(demo_root, "2026-10")
    assert len(older_rows) < len(latest_rows)
    older_total = sum(row["line_item_unblended_cost"] for row in older_rows)
    assert older_total < sum(row["line_item_unblended_cost"] for row in latest_rows)


def test_every_row_belongs_to_the_billing_period_of_its_folder(demo_root: Path) -> None:
    for period, first_day in PERIODS.items():
        next_month = datetime(first_day.year + first_day.month // 12, first_day.month % 12 + 1, 1)
        for file in (_export_root(demo_root) / "data" / f"BILLING_PERIOD={period}").rglob("*.parquet"):
            for row in _cur_rows([file]):
                assert row["bill_billing_period_start_date"] == datetime(first_day.year, first_day.month, 1)
                assert row["bill_billing_period_end_date"] == next_month
                assert row["bill_billing_period_start_date"] <= row["line_item_usage_start_date"] < next_month
                assert row["line_item_currency_code"] == "USD"
                assert row["line_item_net_unblended_cost"] is None


def test_only_the_closed_period_has_an_invoice_id(demo_root: Path) -> None:
    assert {row["bill_invoice_id"] for row in _latest_cur_rows(demo_root, "2026-10")} != {None}
    assert {row["bill_invoice_id"] for row in _latest_cur_rows(demo_root, "2026-11")} == {None}


def test_line_item_ids_are_unique_within_their_time_interval(demo_root: Path) -> None:
    for period in PERIODS:
        rows = _latest_cur_rows(demo_root, period)
        keys = [(row["identity_line_item_id"], row["identity_time_interval"]) for row in rows]
        assert len(keys) == len(set(keys))


def test_savings_plan_lines_conserve_the_commitment(demo_root: Path) -> None:
    periods_with_plan = 0
    for period in PERIODS:
        rows = _latest_cur_rows(demo_root, period)
        covered = [row for row in rows if row["line_item_line_item_type"] == "SavingsPlanCoveredUsage"]
        negations = [row for row in rows if row["line_item_line_item_type"] == "SavingsPlanNegation"]
        fees = [row for row in rows if row["line_item_line_item_type"] == "SavingsPlanRecurringFee"]
        covered_effective = defaultdict(float)
        for row in covered:
            assert row["line_item_unblended_cost"] == pytest.approx(row["pricing_public_on_demand_cost"])
            covered_effective[row["line_item_usage_start_date"]] += row["savings_plan_savings_plan_effective_cost"]
        for fee in fees:
            assert fee["line_item_unblended_cost"] == fee["savings_plan_total_commitment_to_date"]
            assert fee["savings_plan_total_commitment_to_date"] >= fee["savings_plan_used_commitment"] >= 0
            assert fee["savings_plan_used_commitment"] == pytest.approx(
                covered_effective[fee["line_item_usage_start_date"]], abs=TOLERANCE
            )
        assert sum(row["line_item_unblended_cost"] for row in covered + negations) == pytest.approx(0, abs=TOLERANCE)
        assert all(row["pricing_public_on_demand_cost"] == 0 for row in negations)
        assert len(negations) == len(covered)
        amortized = sum(_amortized_cost(row) for row in covered + negations + fees)
        unused = sum(fee["savings_plan_total_commitment_to_date"] - fee["savings_plan_used_commitment"] for fee in fees)
        assert amortized == pytest.approx(sum(covered_effective.values()) + unused, abs=TOLERANCE)
        assert sum(fee["line_item_unblended_cost"] for fee in fees) == pytest.approx(amortized, abs=TOLERANCE)
        periods_with_plan += bool(covered)
    assert periods_with_plan >= 1


def test_reserved_instance_fee_matches_its_usage(demo_root: Path) -> None:
    for period in PERIODS:
        rows = _latest_cur_rows(demo_root, period)
        usage = [row for row in rows if row["line_item_line_item_type"] == "DiscountedUsage"]
        fees = [row for row in rows if row["line_item_line_item_type"] == "RIFee"]
        assert usage and len(fees) == 1
        fee = fees[0]
        assert all(row["line_item_unblended_cost"] == 0 and row["pricing_term"] == "Reserved" for row in usage)
        assert {row["reservation_reservation_a_r_n"] for row in usage} == {fee["reservation_reservation_a_r_n"]}
        reserved_hours = fee["line_item_usage_amount"]
        used_hours = sum(row["line_item_usage_amount"] for row in usage)
        assert 0 < used_hours < reserved_hours
        unused_share = 1 - used_hours / reserved_hours
        assert fee["reservation_unused_recurring_fee"] == pytest.approx(fee["line_item_unblended_cost"] * unused_share)
        assert fee["reservation_unused_amortized_upfront_fee_for_billing_period"] == pytest.approx(
            fee["reservation_amortized_upfront_fee_for_billing_period"] * unused_share
        )
        # The month's whole commitment (upfront share + recurring) is amortized: used part on usage, rest on the fee.
        commitment = fee["reservation_amortized_upfront_fee_for_billing_period"] + fee["line_item_unblended_cost"]
        amortized = sum(_amortized_cost(row) for row in usage) + _amortized_cost(fee)
        assert amortized == pytest.approx(commitment, abs=TOLERANCE)


def test_aws_has_credits_taxes_and_a_support_fee_each_period(demo_root: Path) -> None:
    for period in PERIODS:
        rows = _latest_cur_rows(demo_root, period)
        by_type = defaultdict(list)
        for row in rows:
            by_type[row["line_item_line_item_type"]].append(row)
        assert all(row["line_item_unblended_cost"] < 0 for row in by_type["Credit"]) and by_type["Credit"]
        assert {row["line_item_usage_account_id"] for row in by_type["Tax"]} == {
            row["line_item_usage_account_id"] for row in by_type["Usage"]
        }
        support = [row for row in by_type["Fee"] if row["line_item_product_code"] == "AWSSupportBusiness"]
        assert len(support) == 1 and support[0]["line_item_resource_id"] is None


def test_row_count_is_in_the_demo_range(demo_root: Path) -> None:
    aws_rows = sum(len(_latest_cur_rows(demo_root, period)) for period in PERIODS)
    total = aws_rows + len(_gcp_rows(demo_root))
    assert 4_000 <= total <= 15_000


def test_all_three_runs_appear_in_tags_and_labels(demo_root: Path) -> None:
    run_keys = {"training_run", "training-run", "run_id"}
    tagged = set()
    for period in PERIODS:
        for row in _latest_cur_rows(demo_root, period):
            tagged |= {value for key, value in row["resource_tags"] if key.removeprefix("user_") in run_keys}
    for row in _gcp_rows(demo_root):
        tagged |= {label["value"] for label in row["labels"] if label["key"] in run_keys}
    assert tagged == RUNS


def test_gcp_rows_belong_to_two_invoice_months_with_a_late_row(demo_root: Path) -> None:
    rows = _gcp_rows(demo_root)
    assert {row["invoice"]["month"] for row in rows} == {"202610", "202611"}
    assert {row["cost_type"] for row in rows} == {"regular", "tax", "adjustment"}
    assert [row["invoice"]["month"] for row in rows if row["cost_type"] == "tax"] == ["202610", "202611"]
    late = [
        row
        for row in rows
        if row["invoice"]["month"] == "202610"
        and row["usage_start_time"].startswith("2026-10-31")
        and row["export_time"] >= "2026-11-03"
    ]
    assert late
    assert any(isinstance(row["cost"], str) for row in rows) and any(isinstance(row["cost"], float) for row in rows)
    assert all(credit["amount"] <= 0 for row in rows for credit in row["credits"])
    assert any(credit["type"] == "COMMITTED_USAGE_DISCOUNT" for row in rows for credit in row["credits"])
    export_times = [row["export_time"] for row in rows]
    assert export_times == sorted(export_times)


def test_registry_and_budgets_name_the_three_runs(demo_root: Path) -> None:
    registry = _registry(demo_root)
    assert set(registry) == RUNS
    assert all(isinstance(run["start"], datetime) and run["start"] < run["end"] for run in registry.values())
    files = sorted((demo_root / ".runledger/demo/budgets").glob("*.yaml"))
    groups = {path.stem: _read_yaml(path)["scope"] for path in files if "scope" in _read_yaml(path)}
    # beside them, the sweep's and the platform team's group budgets (pipelines/demo/story/group_budgets.py)
    assert groups == {"lr-sweep-1b": {"experiment": "lr-sweep-1b"}, "team-ml-platform": {"owner": "ml-platform"}}
    budgets = [path for path in files if path.stem not in groups]
    assert {path.stem for path in budgets} == RUNS
    for path in budgets:
        budget = _read_yaml(path)
        assert budget["training_run"] == path.stem
        assert isinstance(budget["model"]["parameters"], float) and isinstance(budget["model"]["tokens"], float)
        assert budget["window"]["start"] < budget["window"]["end"]
        # warn when the estimate is reached, over 10 % beyond it: a run ending on plan raises nothing
        assert budget["thresholds"] == {"warning": 1.0, "over": 1.1}


def test_7b_needed_more_gpu_hours_than_estimated_and_13b_fewer(demo_root: Path) -> None:
    registry = _registry(demo_root)
    budgets = {run: _read_yaml(demo_root / f".runledger/demo/budgets/{run}.yaml") for run in RUNS}

    gpu_hours_7b, cost_7b = _aws_actual_compute(demo_root, registry["llm-7b-pt-r1"])
    estimated_hours_7b, estimated_cost_7b = _estimated_compute(budgets["llm-7b-pt-r1"])
    assert gpu_hours_7b > estimated_hours_7b
    assert 0.75 * cost_7b <= estimated_cost_7b <= 0.90 * cost_7b

    gpu_hours_13b, cost_13b = _aws_actual_compute(demo_root, registry["llm-13b-ft-r2"])
    estimated_hours_13b, estimated_cost_13b = _estimated_compute(budgets["llm-13b-ft-r2"])
    assert gpu_hours_13b < estimated_hours_13b
    assert cost_13b < 0.8 * estimated_cost_13b


def test_3b_lands_close_to_its_estimate(demo_root: Path) -> None:
    run_rows = [
        row
        for row in _gcp_rows(demo_root)
        if {"key": "training-run", "value": "llm-3b-pt-gcp"} in row["labels"]
        and row["service"]["description"] == "Compute Engine"
    ]
    gpu_hours = sum(row["usage"]["amount_in_pricing_units"] for row in run_rows if "GPU" in row["sku"]["description"])
    cost = sum(_net_cost(row) for row in run_rows)
    budget = _read_yaml(demo_root / ".runledger/demo/budgets/llm-3b-pt-gcp.yaml")
    estimated_hours, estimated_cost = _estimated_compute(budget)
    assert gpu_hours == pytest.approx(estimated_hours, rel=0.10)
    assert cost == pytest.approx(estimated_cost, rel=0.10)
    assert cost / gpu_hours == pytest.approx(budget["model"]["gpu_hour_price"], rel=0.01)
