"""The budget file format, its validation messages and the pre-training resource model."""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from decimal import ROUND_HALF_EVEN, Decimal, localcontext
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
import yaml

from pipelines.plans.estimate import baseline_rows, estimate
from pipelines.plans.estimate_text import format_estimate
from pipelines.plans.files import (
    BudgetError,
    load_budget,
    load_budgets_with_files,
    read_budget_folder,
    require_scope_dimensions,
)

WORKED_EXAMPLE = textwrap.dedent(
    """\
    training_run: llm-7b-pt-r1
    currency: USD
    window: {start: 2026-10-01, end: 2026-11-01}
    model:
      parameters: 7.0e9
      tokens: 1.0e12
      gpu_peak_tflops: 989
      mfu: 0.40
      overhead: 0.10
      gpus: 256
      gpu_hour_price: 3.90
    storage: {checkpoint_gb: 98, checkpoints_retained: 5, dataset_gb: 4000, price_gb_month: 0.023}
    network: {egress_gb: 2000, price_gb: 0.02}
    fixed: {data: 12000, monitoring: 1500}
    thresholds: {warning: 0.8, over: 1.0}
    """
)


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(text)
    return path


def exact_decimal(value: Fraction) -> Decimal:
    """The fraction rounded to 10 decimals, half to even, as the model quantizes."""
    with localcontext(prec=80):
        return (Decimal(value.numerator) / Decimal(value.denominator)).quantize(
            Decimal("1e-10"), rounding=ROUND_HALF_EVEN
        )


def test_llama2_7b_anchor_reproduces_the_published_gpu_hours(tmp_path: Path) -> None:
    published_gpu_hours = Decimal(184_320)  # Llama 2 7B, 2.0T tokens, A100-80GB
    parameters, tokens, a100_peak_tflops = Decimal("7e9"), Decimal("2.0e12"), Decimal(312)
    with localcontext(prec=50):
        implied_mfu = 6 * parameters * tokens / (a100_peak_tflops * Decimal("1e12") * 3600 * published_gpu_hours)
    assert Decimal("0.40") < implied_mfu < Decimal("0.42")  # BILLING.md: about 0.41
    path = write(
        tmp_path,
        "llama2-7b.yaml",
        textwrap.dedent(
            f"""\
            training_run: llama2-7b
            currency: USD
            window: {{start: 2023-01-01, end: 2023-02-01}}
            model: {{parameters: 7e9, tokens: 2.0e12, gpu_peak_tflops: 312, mfu: "{implied_mfu}",
                     overhead: 0, gpus: 2048, gpu_hour_price: 1.0}}
            thresholds: {{warning: 0.8, over: 1.0}}
            """
        ),
    )

    result = estimate(load_budget(path))

    assert abs(result.gpu_hours - published_gpu_hours) <= Decimal("0.01")
    assert result.flops == Decimal("8.4e22")


@pytest.mark.parametrize(
    ("parameters", "published_gpu_hours", "reported_mfu"),
    [("7e9", 184_320, "0.41"), ("13e9", 368_640, "0.38"), ("70e9", 1_720_320, "0.44")],
    ids=["llama2-7b", "llama2-13b", "llama2-70b"],
)
def test_llama2_gpu_hours_from_measured_throughput(
    tmp_path: Path, parameters: str, published_gpu_hours: int, reported_mfu: str
) -> None:
    # 2.0T tokens on A100-80GB (312 TFLOP/s): the throughput the published GPU-hours imply,
    # tokens / (GPU-hours x 3600), reproduces them, and implies the MFU BILLING.md reports.
    tokens = Decimal("2.0e12")
    with localcontext(prec=50):
        throughput = tokens / (published_gpu_hours * 3600)
    path = write(
        tmp_path,
        "llama2.yaml",
        textwrap.dedent(
            f"""\
            training_run: llama2
            currency: USD
            window: {{start: 2023-01-01, end: 2023-02-01}}
            model: {{parameters: {parameters}, tokens: 2.0e12, gpu_peak_tflops: 312,
                     tokens_per_second_per_gpu: "{throughput}", gpus: 2048, gpu_hour_price: 1}}
            thresholds: {{warning: 0.8, over: 1.0}}
            """
        ),
    )

    result = estimate(load_budget(path))

    assert abs(result.gpu_hours - published_gpu_hours) <= Decimal("0.0001")
    assert abs(result.mfu - Decimal(reported_mfu)) < Decimal("0.01")
    assert result.effective_mfu == result.mfu  # no overhead


def test_throughput_instead_of_mfu_with_training_steps(tmp_path: Path) -> None:
    # By hand: 3.6e11 tokens at 10,000 tokens/s per GPU = 10,000 GPU-hours, x 1.25 overhead =
    # 12,500; / 100 GPUs = 125 wall hours; compute 12,500 x 2 = 25,000. At 1000 TFLOP/s the
    # 6 x 1e9 x 3.6e11 = 2.16e21 FLOPs take 600 GPU-hours: MFU 1e4 x 6e9 / 1e15 = 0.06, and
    # 600 / 12,500 = 0.048 over every GPU-hour. 512 x 2048 = 1,048,576 tokens per step:
    # 3.6e11 / 1,048,576 = 343,322.75, so 343,323 steps.
    path = write(
        tmp_path,
        "throughput.yaml",
        textwrap.dedent(
            """\
            training_run: llm-1b
            currency: USD
            window: {start: 2026-10-01, end: 2026-11-01}
            model: {parameters: 1e9, tokens: 3.6e11, gpu_peak_tflops: 1000,
                    tokens_per_second_per_gpu: 10000, overhead: 0.25, gpus: 100,
                    gpu_hour_price: 2, batch_size: 512, sequence_length: 2048}
            thresholds: {warning: 0.8, over: 1.0}
            """
        ),
    )
    budget = load_budget(path)

    result = estimate(budget)
    text = format_estimate(budget, result)

    assert result.gpu_hours == Decimal(12500)
    assert result.wall_hours == Decimal(125)
    assert result.costs == {"compute": Decimal(25000)}
    assert result.mfu == Decimal("0.06")
    assert result.gpu_hours_at_peak == Decimal(600)
    assert result.effective_mfu == Decimal("0.048")
    assert (result.tokens_per_step, result.steps) == (1_048_576, 343_323)
    for expected in (
        "343,323  (1,048,576 tokens per step: batch 512 x sequence 2,048)",
        "6.0 %  (implied by the throughput",
        "10,000.0  (given)",
        "4.8 %  (over every GPU-hour",
        "125.00  (5.21 days on 100 GPUs)",
        "cost per 1e9 tokens",
    ):
        assert expected in text
    assert baseline_rows(budget, path)[0]["gpu_hours_at_peak"] == Decimal(600)


def test_mfu_implies_the_throughput(tmp_path: Path) -> None:
    budget = load_budget(write(tmp_path, "llm-7b.yaml", WORKED_EXAMPLE))

    result = estimate(budget)

    # 0.40 x 989e12 FLOP/s / (6 x 7e9 FLOPs per token) = 9,419.047619... tokens/s per GPU
    assert result.tokens_per_second_per_gpu == exact_decimal(Fraction("0.40") * 989 * 10**12 / (42 * 10**9))
    assert result.mfu == Decimal("0.40")
    assert result.effective_mfu == exact_decimal(Fraction("0.40") / Fraction("1.10"))
    assert (result.steps, result.tokens_per_step) == (None, None)


def test_worked_example_matches_a_hand_computation(tmp_path: Path) -> None:
    budget = load_budget(write(tmp_path, "llm-7b.yaml", WORKED_EXAMPLE))

    result = estimate(budget)

    # By hand: 6 x 7e9 x 1e12 = 4.2e22 FLOPs; one GPU-hour at 989 TFLOP/s and 40 % MFU does
    # 989e12 x 0.40 x 3600 = 1.42416e18 FLOPs, so 4.2e22 / 1.42416e18 = 29,491.068 ideal
    # GPU-hours, x 1.10 overhead = 32,440.175 GPU-hours; / 256 GPUs = 126.719 wall hours (5.28
    # days); compute 32,440.175 x 3.90 = 126,516.68; storage (98 x 5 + 4000) GB x 0.023 x
    # 126.719 h / 730 = 17.93; network 2000 x 0.02 = 40; total 140,074.61, 140.07 per 1e9 tokens.
    flops_per_gpu_hour = 989 * 10**12 * Fraction("0.40") * 3600
    gpu_hours = Fraction(6 * 7 * 10**9 * 10**12) / flops_per_gpu_hour * Fraction("1.10")
    wall_hours = Fraction(exact_decimal(gpu_hours)) / 256
    storage = (98 * 5 + 4000) * Fraction("0.023") * Fraction(exact_decimal(wall_hours)) / 730
    assert result.flops == Decimal("4.2e22")
    assert result.gpu_hours == exact_decimal(gpu_hours)
    assert result.wall_hours == exact_decimal(wall_hours)
    assert result.costs == {
        "compute": exact_decimal(Fraction(exact_decimal(gpu_hours)) * Fraction("3.90")),
        "storage": exact_decimal(storage),
        "network": Decimal("40"),
        "data": Decimal("12000"),
        "monitoring": Decimal("1500"),
    }
    assert round(result.gpu_hours, 2) == Decimal("32440.18")
    assert round(result.wall_hours, 2) == Decimal("126.72")
    assert round(result.costs["compute"], 2) == Decimal("126516.68")
    assert round(result.costs["storage"], 2) == Decimal("17.93")
    assert result.total == sum(result.costs.values())
    assert round(result.total, 2) == Decimal("140074.61")
    assert result.cost_per_billion_tokens == exact_decimal(Fraction(result.total) / 1000)


def test_storage_counts_the_nodes_volumes_over_the_wall_clock(tmp_path: Path) -> None:
    document = yaml.safe_load(WORKED_EXAMPLE)
    document["storage"] |= {"node_volume_gb": 2000, "volume_price_gb_month": 0.08}
    budget = load_budget(write(tmp_path, "llm-7b.yaml", yaml.safe_dump(document)))
    without_volumes = estimate(load_budget(write(tmp_path, "old.yaml", WORKED_EXAMPLE)))

    result = estimate(budget)

    # 256 GPUs at the default 8 per node = 32 nodes; 32 x 2000 GB x 0.08 x 126.719 h / 730 = 888.77,
    # beside the checkpoints and dataset's 17.93 (unchanged without the keys)
    wall_hours = Fraction(result.wall_hours)
    volumes = 32 * 2000 * Fraction("0.08") * wall_hours / 730
    checkpoints_and_data = (98 * 5 + 4000) * Fraction("0.023") * wall_hours / 730
    assert budget.model.nodes == 32
    assert result.node_volume_cost == exact_decimal(volumes)
    assert result.costs["storage"] == exact_decimal(volumes + checkpoints_and_data)
    assert round(result.costs["storage"], 2) == Decimal("906.70")
    assert without_volumes.costs["storage"] == exact_decimal(checkpoints_and_data)
    assert without_volumes.node_volume_cost is None
    text = format_estimate(budget, result)
    assert "  storage                                   906.70  elastic\n" in text
    assert "    of which node volumes                   888.77  (32 nodes x 2,000 GB at 0.08 per GB-month)\n" in text
    assert "node volumes" not in format_estimate(budget, without_volumes)

    # 12 GPUs per node: 22 nodes (the last one partly used); the volumes at the storage price
    document["model"]["gpus_per_node"] = 12
    del document["storage"]["volume_price_gb_month"]
    other = estimate(load_budget(write(tmp_path, "per-node.yaml", yaml.safe_dump(document))))
    assert other.node_volume_cost == exact_decimal(22 * 2000 * Fraction("0.023") * wall_hours / 730)


def test_compute_cost_is_the_quantized_product_of_hours_and_rate(tmp_path: Path) -> None:
    budget = load_budget(write(tmp_path, "llm-7b.yaml", WORKED_EXAMPLE))

    compute = baseline_rows(budget, "budgets/llm-7b.yaml")[0]

    assert compute["cost_category"] == "compute"
    assert compute["estimated_rate"] == Decimal("3.90")
    assert compute["estimated_cost"] == (compute["estimated_gpu_hours"] * compute["estimated_rate"]).quantize(
        Decimal("1e-10")
    )


def test_baseline_rows_hold_one_row_per_category(tmp_path: Path) -> None:
    budget = load_budget(write(tmp_path, "llm-7b.yaml", WORKED_EXAMPLE))

    rows = baseline_rows(budget, Path("budgets/llm-7b.yaml"))

    assert [row["cost_category"] for row in rows] == [
        "compute",
        "storage",
        "network",
        "data",
        "monitoring",
    ]
    assert {row["training_run"] for row in rows} == {"llm-7b-pt-r1"}
    assert {row["budget_file"] for row in rows} == {"budgets/llm-7b.yaml"}
    assert rows[0]["thresholds"] == {"warning": Decimal("0.8"), "over": Decimal("1")}
    assert rows[0]["window"] == {"start": budget.window.start, "end": budget.window.end}
    for row in rows[1:]:
        assert row["estimated_gpu_hours"] is None and row["estimated_rate"] is None
    for row in rows:  # 10 decimal places: never a positive exponent that DuckDB would misread
        assert row["estimated_cost"].as_tuple().exponent == -10


def test_budget_without_model_estimates_its_fixed_amounts(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "fine-tune.yaml",
        textwrap.dedent(
            """\
            training_run: llm-13b-ft-r2
            currency: EUR
            window: {start: 2026-10-01, end: 2026-10-15}
            network: {egress_gb: 100, price_gb: 0.09}
            fixed: {compute: 5000.5, tax: 1.2e+3}
            thresholds: {warning: 0.9, over: 1.1}
            """
        ),
    )
    budget = load_budget(path)

    result = estimate(budget)
    rows = baseline_rows(budget, path)

    assert (result.flops, result.gpu_hours, result.wall_hours) == (None, None, None)
    assert result.costs == {
        "compute": Decimal("5000.5"),
        "network": Decimal("9"),
        "tax": Decimal("1200"),
    }
    assert result.cost_per_billion_tokens is None
    assert rows[0]["cost_category"] == "compute"
    assert rows[0]["estimated_gpu_hours"] is None and rows[0]["estimated_rate"] is None
    assert "total" in format_estimate(budget, result)


def test_non_cloud_fixed_lines_are_fixed_and_the_model_lines_elastic(tmp_path: Path) -> None:
    budget = load_budget(
        write(
            tmp_path,
            "llm-7b.yaml",
            WORKED_EXAMPLE.replace(
                "fixed: {data: 12000, monitoring: 1500}", "fixed: {labor: 50000, data_labeling: 12000.5, data: 800}"
            ),
        )
    )

    rows = baseline_rows(budget, "budgets/llm-7b.yaml")

    assert [(row["cost_category"], row["cost_behavior"]) for row in rows] == [
        ("compute", "elastic"),
        ("storage", "elastic"),
        ("network", "elastic"),
        ("data", "fixed"),
        ("labor", "fixed"),
        ("data_labeling", "fixed"),
    ]
    assert [row["estimated_cost"] for row in rows[3:]] == [Decimal(800), Decimal(50000), Decimal("12000.5")]
    text = format_estimate(budget, estimate(budget))
    assert [line.split()[::2] for line in text.splitlines() if line.split()[:1] in (["labor"], ["network"])] == [
        ["network", "elastic"],
        ["labor", "fixed"],
    ]


def test_a_fixed_compute_amount_is_a_fixed_line(tmp_path: Path) -> None:
    budget = load_budget(
        write(
            tmp_path,
            "ft.yaml",
            "training_run: ft\ncurrency: USD\nwindow: {start: 2026-10-01, end: 2026-10-15}\n"
            "network: {egress_gb: 100, price_gb: 0.09}\nfixed: {compute: 5000, on_prem: 900}\n"
            "thresholds: {warning: 0.9, over: 1.1}\n",
        )
    )

    rows = baseline_rows(budget, "budgets/ft.yaml")

    assert [(row["cost_category"], row["cost_behavior"]) for row in rows] == [
        ("compute", "fixed"),
        ("network", "elastic"),
        ("on_prem", "fixed"),
    ]


def test_format_estimate_shows_the_model_and_every_category(tmp_path: Path) -> None:
    budget = load_budget(write(tmp_path, "llm-7b.yaml", WORKED_EXAMPLE))

    text = format_estimate(budget, estimate(budget))

    for expected in (
        "llm-7b-pt-r1",
        "4.200e+22",
        "32,440.18",
        "126.72",
        "5.28 days on 256 GPUs",
        "126,516.68",
        "17.93",
        "12,000.00",
        "1,500.00",
        "140,074.61",
        "cost per 1e9 tokens",
        "140.07",
    ):
        assert expected in text
    lines = text.splitlines()
    total_line = next(line for line in lines if line.strip().startswith("total"))
    assert total_line.split()[-1] == "140,074.61"


def _set(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def change(document: dict[str, Any]) -> None:
        *parents, key = path.split(".")
        node = document
        for parent in parents:
            node = node[parent]
        node[key] = value

    return change


def _drop(*keys: str) -> Callable[[dict[str, Any]], None]:
    def change(document: dict[str, Any]) -> None:
        for key in keys:
            document.pop(key)

    return change


def _drop_model_key(key: str) -> Callable[[dict[str, Any]], None]:
    def change(document: dict[str, Any]) -> None:
        document["model"].pop(key)

    return change


INVALID_BUDGETS = [
    (
        "mfu above 1",
        _set("model.mfu", 1.4),
        "model.mfu: must be in (0, 1], got 1.4; give the model FLOPs utilization",
    ),
    ("mfu zero", _set("model.mfu", 0), "model.mfu: must be in (0, 1], got 0"),
    ("parameters zero", _set("model.parameters", 0), "model.parameters: must be greater than 0"),
    ("tokens negative", _set("model.tokens", -1.0e12), "model.tokens: must be greater than 0"),
    ("tokens not a number", _set("model.tokens", "lots"), "model.tokens: input should be a valid"),
    (
        "tokens beyond the warehouse",
        _set("model.tokens", 1.0e40),
        (
            "model.tokens: must be below 10^15, the largest number RunLedger holds, got 1E+40; check its unit and "
            "exponent (docs/semantics.md#amounts) (the budget of 'llm-7b-pt-r1')"
        ),
    ),
    (
        "fixed amount beyond the arithmetic",
        _set("fixed.data", 1.0e15),
        "fixed.data: must be below 10^15, the largest number RunLedger holds, got 1000000000000000.0",
    ),
    (
        "checkpoints beyond an INTEGER",
        _set("storage.checkpoints_retained", 2**31),
        "storage.checkpoints_retained: must be at most 2,147,483,647 (the warehouse's INTEGER), got 2147483648",
    ),
    (
        "estimate beyond the arithmetic",
        _set("storage.price_gb_month", 1.0e14),
        (
            "storage: the estimated storage cost is 7.794E+16, but RunLedger holds numbers below 10^15; check the "
            "numbers of this section for a wrong unit or exponent (docs/semantics.md#amounts) (the budget of "
            "'llm-7b-pt-r1')"
        ),
    ),
    (
        "checkpoint write time zero",
        _set("checkpoint_write_seconds", 0),
        "checkpoint_write_seconds: must be greater than 0, got 0",
    ),
    ("no gpus", _set("model.gpus", 0), "model.gpus: must be greater than 0, got 0"),
    ("fractional gpus", _set("model.gpus", 2.5), "model.gpus: input should be a valid integer"),
    ("zero peak", _set("model.gpu_peak_tflops", 0), "model.gpu_peak_tflops: must be greater"),
    ("negative overhead", _set("model.overhead", -0.1), "model.overhead: must be 0 or more"),
    ("negative price", _set("model.gpu_hour_price", -3.9), "model.gpu_hour_price: must be 0 or"),
    ("negative storage price", _set("storage.price_gb_month", -1), "storage.price_gb_month: must"),
    ("negative node volume", _set("storage.node_volume_gb", -1), "storage.node_volume_gb: must be 0 or more"),
    ("negative volume price", _set("storage.volume_price_gb_month", -1), "storage.volume_price_gb_month: must"),
    ("no gpus per node", _set("model.gpus_per_node", 0), "model.gpus_per_node: must be greater than 0, got 0"),
    ("negative egress price", _set("network.price_gb", -1), "network.price_gb: must be 0 or more"),
    ("negative fixed amount", _set("fixed.data", -5), "fixed.data: must be 0 or more, got -5"),
    ("unknown category", _set("fixed.gpus", 10), "fixed.gpus: unknown cost category; use one of"),
    ("compute twice", _set("fixed.compute", 10), "fixed.compute: cannot be given together with"),
    ("storage twice", _set("fixed.storage", 10), "fixed.storage: cannot be given together with"),
    ("window backwards", _set("window.end", "2026-09-01"), "window.end: must be after"),
    ("empty window", _set("window.end", "2026-10-01"), "window.end: must be after window.start"),
    ("bad date", _set("window.start", "soon"), "window.start: input should be a valid date"),
    ("zero warning", _set("thresholds.warning", 0), "thresholds.warning: must be greater than 0"),
    ("over below warning", _set("thresholds.over", 0.5), "thresholds.over: must be at least"),
    (
        "mfu and throughput",
        _set("model.tokens_per_second_per_gpu", 9000),
        "model.tokens_per_second_per_gpu: cannot be given together with `mfu`",
    ),
    ("no speed", _drop_model_key("mfu"), "model.mfu: required key is missing; give `mfu`"),
    ("mfu without peak", _drop_model_key("gpu_peak_tflops"), "model.gpu_peak_tflops: required key"),
    ("batch without sequence", _set("model.batch_size", 1024), "model.sequence_length: required key"),
    ("zero sequence length", _set("model.sequence_length", 0), "model.sequence_length: must be greater"),
    ("unknown key", _set("model.mfu_pct", 40), "model.mfu_pct: unknown key; remove it or fix"),
    ("missing key", _drop("training_run"), "training_run: required key is missing; add it"),
    ("missing thresholds", _drop("thresholds"), "thresholds: required key is missing"),
    ("lower-case currency", _set("currency", "usd"), "currency: must be a 3-letter ISO 4217 code"),
    ("unknown currency", _set("currency", "XYZ"), "currency: must be a 3-letter ISO 4217 code"),
    ("blank run id", _set("training_run", " llm "), "training_run: must be the run id without"),
    ("section not a mapping", _set("model", 5), "model: must be a mapping of keys, got 5"),
    ("storage without model", _drop("model", "fixed"), "storage: needs `model`"),
    (
        "nothing to estimate",
        _drop("model", "storage", "network", "fixed"),
        "has no cost: give at least one of model, storage, network or fixed",
    ),
]


@pytest.mark.parametrize(
    ("change", "expected"),
    [case[1:] for case in INVALID_BUDGETS],
    ids=[case[0] for case in INVALID_BUDGETS],
)
def test_invalid_budget_names_file_and_key(
    tmp_path: Path, change: Callable[[dict[str, Any]], None], expected: str
) -> None:
    document = yaml.safe_load(WORKED_EXAMPLE)
    change(document)
    path = write(tmp_path, "llm-7b.yaml", yaml.safe_dump(document))

    with pytest.raises(BudgetError) as raised:
        load_budget(path)

    assert str(raised.value).startswith(f"{path}: {expected}")


def test_every_problem_of_a_file_is_reported(tmp_path: Path) -> None:
    document = yaml.safe_load(WORKED_EXAMPLE)
    document["model"]["mfu"] = 1.4
    document["network"]["price_gb"] = -1
    path = write(tmp_path, "llm-7b.yaml", yaml.safe_dump(document))

    with pytest.raises(BudgetError) as raised:
        load_budget(path)

    assert str(raised.value).splitlines() == [
        (
            f"{path}: model.mfu: must be in (0, 1], got 1.4; give the model FLOPs utilization as a "
            "fraction of the peak, e.g. 0.40 for 40 %"
        ),
        f"{path}: network.price_gb: must be 0 or more, got -1",
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("training_run: [unclosed\n", "not valid YAML (line 2, column 1)"),
        ("- a list\n", "expected a mapping of budget keys (training_run, currency, window, ...)"),
        ("", "got an empty file"),
    ],
    ids=["malformed", "list", "empty"],
)
def test_unusable_yaml_names_the_file(tmp_path: Path, text: str, expected: str) -> None:
    path = write(tmp_path, "llm-7b.yaml", text)

    with pytest.raises(BudgetError) as raised:
        load_budget(path)

    assert str(raised.value).startswith(f"{path}: ")
    assert expected in str(raised.value)


def test_missing_file_is_a_budget_error(tmp_path: Path) -> None:
    with pytest.raises(BudgetError, match=r"nope\.yaml: file not found"):
        load_budget(tmp_path / "nope.yaml")


def test_budget_folder_reads_yaml_and_yml_sorted_by_name(tmp_path: Path) -> None:
    write(tmp_path, "b.yml", WORKED_EXAMPLE.replace("llm-7b-pt-r1", "run-b"))
    write(tmp_path, "a.yaml", WORKED_EXAMPLE.replace("llm-7b-pt-r1", "run-a"))
    write(tmp_path, "notes.txt", "not a budget")

    with_files = load_budgets_with_files(tmp_path)

    assert [(budget.training_run, path.name) for budget, path in with_files] == [
        ("run-a", "a.yaml"),
        ("run-b", "b.yml"),
    ]


def test_two_files_for_one_run_are_an_error_naming_both(tmp_path: Path) -> None:
    first = write(tmp_path, "a.yaml", WORKED_EXAMPLE)
    second = write(tmp_path, "b.yaml", WORKED_EXAMPLE)

    with pytest.raises(BudgetError) as raised:
        load_budgets_with_files(tmp_path)

    assert str(raised.value) == (
        f"{second}: training_run: 'llm-7b-pt-r1' is already budgeted in {first}; keep one budget file per run"
    )


def test_problems_of_all_files_are_reported_together(tmp_path: Path) -> None:
    first = write(tmp_path, "a.yaml", WORKED_EXAMPLE.replace("mfu: 0.40", "mfu: 1.4"))
    second = write(tmp_path, "b.yaml", "training_run: [unclosed\n")

    with pytest.raises(BudgetError) as raised:
        load_budgets_with_files(tmp_path)

    lines = str(raised.value).splitlines()
    assert lines[0].startswith(f"{first}: model.mfu:")
    assert lines[1].startswith(f"{second}: not valid YAML")


def test_missing_budget_folder_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(BudgetError, match="budget folder does not exist"):
        load_budgets_with_files(tmp_path / "budgets")


TEAM_BUDGET = textwrap.dedent(
    """\
    scope: {owner: team-llm}
    currency: USD
    period: monthly
    from: 2026-10
    amount: {compute: 80000, storage: 20000}
    thresholds: {warning: 0.8, over: 1.0}
    """
)


def test_a_scope_file_is_a_group_budget_beside_the_run_budgets(tmp_path: Path) -> None:
    write(tmp_path, "llm-7b.yaml", WORKED_EXAMPLE)
    write(tmp_path, "team.yaml", TEAM_BUDGET)
    write(
        tmp_path,
        "sweep.yaml",
        "scope: {experiment: lr-sweep}\ncurrency: USD\nwindow: {start: 2026-11-17, end: 2026-11-20}\n"
        "amount: 6000\nthresholds: {warning: 0.8, over: 1.0}\n",
    )

    folder = read_budget_folder(tmp_path)

    assert [budget.training_run for budget, _ in folder.runs] == ["llm-7b-pt-r1"]
    assert [(group.scope_kind, group.scope_value, group.period_name, group.amounts) for group, _ in folder.groups] == [
        ("experiment", "lr-sweep", "2026-11-17", {"total": Decimal(6000)}),
        ("owner", "team-llm", "monthly", {"compute": Decimal(80000), "storage": Decimal(20000)}),
    ]
    assert load_budgets_with_files(tmp_path) == folder.runs  # the run budgets' readers see them alone


INVALID_GROUP_BUDGETS = [
    ("both kinds", "training_run: llm-7b\n", "scope: cannot be given together with `training_run`"),
    ("two dimensions", "scope: {owner: a, experiment: b}\n", "scope: must name exactly one dimension"),
    ("a run as scope", "scope: {training_run: llm-7b}\n", "scope.training_run: a run's budget is written with"),
    ("blank value", "scope: {owner: ' '}\n", "scope.owner: must be the dimension's value without surrounding"),
    ("unknown category", "amount: {gpus: 5}\n", "amount.gpus: unknown cost category; use one of compute,"),
    ("negative category", "amount: {compute: -5}\n", "amount.compute: must be 0 or more, got -5"),
    ("zero total", "amount: 0\n", "amount: must be greater than 0, got 0"),
    ("not a month", "from: 2026-13\n", "from: must be a billing period as YYYY-MM (e.g. 2026-10), got '2026-13'"),
    ("no period", "period: null\n", "period: give either `period: monthly` or a `window:`"),
    ("weekly", "period: weekly\n", "period: input should be 'monthly', got 'weekly'"),
    ("over below warning", "thresholds: {warning: 0.9, over: 0.8}\n", "thresholds.over: must be at least"),
    ("unknown key", "owner_email: a@b\n",
     "owner_email: unknown key; remove it or fix its spelling (expected one of: scope, currency, period, window,"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("change", "expected"),
    [case[1:] for case in INVALID_GROUP_BUDGETS],
    ids=[case[0] for case in INVALID_GROUP_BUDGETS],
)
def test_invalid_group_budget_names_file_and_key(tmp_path: Path, change: str, expected: str) -> None:
    document = yaml.safe_load(TEAM_BUDGET) | yaml.safe_load(change)
    path = write(tmp_path, "team.yaml", yaml.safe_dump(document))

    with pytest.raises(BudgetError) as raised:
        read_budget_folder(tmp_path)

    assert str(raised.value).startswith(f"{path}: {expected}")


def test_neither_a_run_nor_a_scope_names_both_keys(tmp_path: Path) -> None:
    document = yaml.safe_load(WORKED_EXAMPLE)
    del document["training_run"]
    path = write(tmp_path, "what.yaml", yaml.safe_dump(document))

    with pytest.raises(BudgetError) as raised:
        read_budget_folder(tmp_path)

    assert str(raised.value) == (
        f"{path}: training_run: required key is missing; add it (or `scope:` for a group's budget: an experiment, "
        "owner, ...)"
    )


def test_two_group_budgets_of_one_scope_and_period_are_an_error_and_overlaps_are_not(tmp_path: Path) -> None:
    first = write(tmp_path, "a.yaml", TEAM_BUDGET)
    write(tmp_path, "b.yaml", TEAM_BUDGET.replace("owner: team-llm", "experiment: lr-sweep"))  # overlaps: allowed
    third = write(tmp_path, "c.yaml", TEAM_BUDGET.replace("amount: {compute: 80000, storage: 20000}", "amount: 5"))

    with pytest.raises(BudgetError) as raised:
        read_budget_folder(tmp_path)

    assert str(raised.value) == (
        f"{third}: scope: 'owner: team-llm (monthly)' is already budgeted in {first}; keep one budget file per scope "
        "and period"
    )


def test_a_scope_of_a_dimension_runledger_does_not_attribute_names_the_allowed_ones(tmp_path: Path) -> None:
    path = write(tmp_path, "team.yaml", TEAM_BUDGET.replace("owner: team-llm", "team: llm"))

    with pytest.raises(BudgetError) as raised:
        require_scope_dimensions(read_budget_folder(tmp_path).groups, ["environment"])

    assert str(raised.value) == (
        f"{path}: scope.team: not a dimension RunLedger attributes; use one of experiment, owner, dataset_version, "
        "cluster, environment (a custom dimension is added under attribution.dimensions in runledger.yaml)"
    )
    require_scope_dimensions(read_budget_folder(tmp_path).groups, ["team"])  # a custom dimension: accepted
