"""Model shapes of the resource model: training methods (pretrain, sft, dpo, lora, qlora, ppo) and mixtures of
experts by their active parameters, each against its documented formula and a published figure."""

from __future__ import annotations

import textwrap
from decimal import ROUND_HALF_EVEN, Decimal, localcontext
from fractions import Fraction
from pathlib import Path
from typing import get_args

import pytest

from pipelines.plans.estimate import estimate
from pipelines.plans.estimate_text import format_estimate
from pipelines.plans.files import BudgetError, load_budget
from pipelines.plans.methods import TRAINING_FLOPS_PER_PARAMETER
from pipelines.plans.schema import Method


def budget_file(folder: Path, model: str, name: str = "run") -> Path:
    path = folder / f"{name}.yaml"
    path.write_text(
        textwrap.dedent(
            f"""\
            training_run: shape-run
            currency: USD
            window: {{start: 2026-10-01, end: 2026-11-01}}
            model: {{{model}}}
            thresholds: {{warning: 0.8, over: 1.0}}
            """
        )
    )
    return path


def exact(value: Fraction) -> Decimal:
    """The fraction rounded to 10 decimals, half to even, as the model quantizes."""
    with localcontext(prec=80):
        return (Decimal(value.numerator) / Decimal(value.denominator)).quantize(
            Decimal("1e-10"), rounding=ROUND_HALF_EVEN
        )


def test_gpt3_175b_training_flops_are_the_published_figure(tmp_path: Path) -> None:
    # Brown et al. 2020, Table D.1: GPT-3 175B, 174,600M parameters, 300B tokens, 3.14E+23 FLOPs
    path = budget_file(
        tmp_path, "parameters: 174.6e9, tokens: 300e9, gpu_peak_tflops: 125, mfu: 0.2, gpus: 1024, gpu_hour_price: 1"
    )

    result = estimate(load_budget(path))

    assert result.flops == 6 * Decimal("174.6e9") * Decimal("300e9")
    assert f"{result.flops:.2e}" == "3.14e+23"


def test_sft_budget_costs_6_n_per_token(tmp_path: Path) -> None:
    # By hand: 6 x 13e9 x 2e10 = 1.56e21 FLOPs; an H100 GPU-hour at 989 TFLOP/s and 35 % MFU does
    # 989e12 x 0.35 x 3600 = 1.24614e18, so 1,251.87 GPU-hours, x 1.05 = 1,314.46; x 2.50 = 3,286.15
    path = budget_file(
        tmp_path,
        "method: sft, parameters: 13e9, tokens: 2e10, gpu_peak_tflops: 989, mfu: 0.35, overhead: 0.05, "
        "gpus: 64, gpu_hour_price: 2.50",
    )
    budget = load_budget(path)

    result = estimate(budget)

    gpu_hours = Fraction(6 * 13 * 10**9 * 2 * 10**10) / (989 * 10**12 * Fraction("0.35") * 3600) * Fraction("1.05")
    assert result.flops == Decimal("1.56e21")
    assert result.gpu_hours == exact(gpu_hours)
    assert round(result.gpu_hours, 2) == Decimal("1314.46")
    assert result.costs == {"compute": exact(Fraction(exact(gpu_hours)) * Fraction("2.50"))}
    assert round(result.total, 2) == Decimal("3286.15")
    assert "training FLOPs (6 N D)" in format_estimate(budget, result)


def test_lora_budget_costs_4_n_per_token_two_thirds_of_sft(tmp_path: Path) -> None:
    # By hand: 4 x 13e9 x 2e10 = 1.04e21 FLOPs / 1.24614e18 per GPU-hour = 834.58 GPU-hours, x 1.05 =
    # 876.31; x 2.50 = 2,190.77: two thirds of the same fine-tune with every weight trained
    model = (
        "parameters: 13e9, tokens: 2e10, gpu_peak_tflops: 989, mfu: 0.35, overhead: 0.05, gpus: 64, "
        "gpu_hour_price: 2.50"
    )
    lora = load_budget(budget_file(tmp_path, f"method: lora, {model}"))
    sft = load_budget(budget_file(tmp_path, f"method: sft, {model}", "sft"))

    result = estimate(lora)

    gpu_hours = Fraction(4 * 13 * 10**9 * 2 * 10**10) / (989 * 10**12 * Fraction("0.35") * 3600) * Fraction("1.05")
    assert result.flops == Decimal("1.04e21") == estimate(sft).flops * 2 / 3
    assert result.gpu_hours == exact(gpu_hours)
    assert round(result.gpu_hours, 2) == Decimal("876.31")
    assert round(result.costs["compute"], 2) == Decimal("2190.77")
    assert "training FLOPs (4 N D)" in format_estimate(lora, result)
    assert "(lora)" in format_estimate(lora, result)


def test_dpo_budget_adds_the_reference_forward_pass(tmp_path: Path) -> None:
    # 8 N = 6 N for the policy + 2 N for the reference model's forward pass. By hand at a measured
    # 1,500 tokens/s per GPU: 3e9 tokens / (1,500 x 3600) = 555.56 GPU-hours, no overhead; the
    # throughput implies an MFU of 1,500 x 8 x 7e9 / 989e12 = 8.49 %
    path = budget_file(
        tmp_path,
        "method: dpo, parameters: 7e9, tokens: 3e9, gpu_peak_tflops: 989, tokens_per_second_per_gpu: 1500, "
        "gpus: 16, gpu_hour_price: 3",
    )
    sft_model = "method: sft, parameters: 7e9, tokens: 3e9, mfu: 0.4, gpu_peak_tflops: 989, gpus: 16, gpu_hour_price: 3"
    sft = load_budget(budget_file(tmp_path, sft_model, "sft"))
    dpo = load_budget(path)

    result = estimate(dpo)

    assert result.flops == 8 * Decimal("7e9") * Decimal("3e9") == estimate(sft).flops * 8 / 6
    assert result.gpu_hours == exact(Fraction(3 * 10**9, 1500 * 3600))
    assert result.mfu == exact(Fraction(1500 * 8 * 7 * 10**9, 989 * 10**12))
    assert result.gpu_hours_at_peak == exact(Fraction(8 * 7 * 10**9 * 3 * 10**9, 989 * 10**12 * 3600))


def test_qlora_budget_costs_what_the_same_lora_costs(tmp_path: Path) -> None:
    # QLoRA dequantizes its 4-bit base for the same matrix products as LoRA: 4 N per token. By hand
    # as the LoRA budget above: 876.31 GPU-hours, 2,190.77 of compute; its slower steps are an MFU
    # the user measures, not more FLOPs
    model = (
        "parameters: 13e9, tokens: 2e10, gpu_peak_tflops: 989, mfu: 0.35, overhead: 0.05, gpus: 64, "
        "gpu_hour_price: 2.50"
    )
    qlora = load_budget(budget_file(tmp_path, f"method: qlora, {model}"))

    result = estimate(qlora)

    assert result.flops == Decimal("1.04e21")
    assert round(result.gpu_hours, 2) == Decimal("876.31")
    assert round(result.costs["compute"], 2) == Decimal("2190.77")
    assert "training FLOPs (4 N D)" in format_estimate(qlora, result)
    assert "(qlora)" in format_estimate(qlora, result)


def test_ppo_budget_counts_generation_three_forward_passes_and_two_trainings(tmp_path: Path) -> None:
    # Per token generated: the policy generates it (2 N); the reference, reward and value models
    # each run a forward pass over it (3 x 2 N); the policy and the value model train on it (2 x 6 N):
    # 20 N. By hand for a 7e9 policy and 5e8 tokens generated: 7e19 FLOPs; at MFU 0.25 on 989
    # TFLOP/s, 7e19 / (989e12 x 0.25 x 3600) = 78.64 GPU-hours, x 1.1 = 86.51, x 4 = 346.03
    model = "parameters: 7e9, tokens: 5e8, gpu_peak_tflops: 989, mfu: 0.25, overhead: 0.1, gpus: 16, gpu_hour_price: 4"
    ppo = load_budget(budget_file(tmp_path, f"method: ppo, {model}"))
    sft = load_budget(budget_file(tmp_path, f"method: sft, {model}", "sft"))

    result = estimate(ppo)

    gpu_hours = Fraction(20 * 7 * 10**9 * 5 * 10**8) / (989 * 10**12 * Fraction("0.25") * 3600) * Fraction("1.1")
    assert result.flops == Decimal("7e19") == estimate(sft).flops * 20 / 6
    assert result.gpu_hours == exact(gpu_hours)
    assert round(result.gpu_hours, 2) == Decimal("86.51")
    assert round(result.costs["compute"], 2) == Decimal("346.03")
    assert "training FLOPs (20 N D)" in format_estimate(ppo, result)
    assert "(ppo)" in format_estimate(ppo, result)


def test_every_method_the_budget_file_accepts_has_its_flops_per_token() -> None:
    assert get_args(Method) == tuple(TRAINING_FLOPS_PER_PARAMETER)


MIXTRAL_8X7B = {  # Jiang et al. 2024, Mixtral of Experts, Table 1
    "dim": 4096,
    "n_layers": 32,
    "head_dim": 128,
    "hidden_dim": 14336,
    "n_heads": 32,
    "n_kv_heads": 8,
    "vocab_size": 32000,
    "num_experts": 8,
    "top_k_experts": 2,
}


def mixtral_parameters(experts_used: int) -> int:
    """Mixtral's parameters from its architecture, with `experts_used` experts per layer."""
    a = MIXTRAL_8X7B
    attention = 2 * a["dim"] * a["n_heads"] * a["head_dim"] + 2 * a["dim"] * a["n_kv_heads"] * a["head_dim"]
    expert = 3 * a["dim"] * a["hidden_dim"]  # SwiGLU: w1, w2, w3
    router_and_norms = a["dim"] * a["num_experts"] + 2 * a["dim"]
    layer = attention + experts_used * expert + router_and_norms
    return a["n_layers"] * layer + 2 * a["vocab_size"] * a["dim"] + a["dim"]


def test_mixtral_architecture_gives_the_published_parameter_counts() -> None:
    # Mistral AI: 46.7B parameters in all, 12.9B used per token (2 of 8 experts)
    assert f"{mixtral_parameters(MIXTRAL_8X7B['num_experts']):.3e}" == "4.670e+10"
    assert f"{mixtral_parameters(MIXTRAL_8X7B['top_k_experts']):.3e}" == "1.288e+10"
    assert round(mixtral_parameters(MIXTRAL_8X7B["top_k_experts"]), -8) == 12_900_000_000


def test_moe_budget_costs_its_active_parameters(tmp_path: Path) -> None:
    # Mixtral-8x7B shape pre-trained on 1e12 tokens: 6 x 12.9e9 x 1e12 = 7.74e22 FLOPs (not the
    # 2.802e23 of its 46.7e9 parameters); at 989 TFLOP/s x 30 % MFU x 3600 = 1.06812e18 per GPU-hour,
    # 72,463.77 GPU-hours, x 1.1 = 79,710.14; x 4.00 = 318,840.58; on 512 GPUs 155.68 wall hours
    path = budget_file(
        tmp_path,
        "parameters: 46.7e9, active_parameters: 12.9e9, tokens: 1e12, gpu_peak_tflops: 989, mfu: 0.30, "
        "overhead: 0.1, gpus: 512, gpu_hour_price: 4",
    )
    budget = load_budget(path)

    result = estimate(budget)

    gpu_hours = Fraction(6 * 129 * 10**8 * 10**12) / (989 * 10**12 * Fraction("0.30") * 3600) * Fraction("1.1")
    assert result.flops == Decimal("7.74e22")
    assert result.gpu_hours == exact(gpu_hours)
    assert round(result.gpu_hours, 2) == Decimal("79710.14")
    assert round(result.costs["compute"], 2) == Decimal("318840.58")
    assert round(result.wall_hours, 2) == Decimal("155.68")
    assert result.tokens_per_second_per_gpu == exact(Fraction("0.30") * 989 * 10**12 / (6 * 129 * 10**8))
    text = format_estimate(budget, result)
    assert "active parameters (N)" in text and "4.670e+10  (in all)" in text and "1.290e+10" in text


@pytest.mark.parametrize(
    ("model", "expected"),
    [
        (
            "method: rlhf",
            "model.method: input should be 'pretrain', 'sft', 'dpo', 'lora', 'qlora' or 'ppo', got 'rlhf'",
        ),
        ("active_parameters: 0", "model.active_parameters: must be greater than 0, got 0"),
        (
            "active_parameters: 50e9",
            (
                "model.active_parameters: must be at most `parameters` (4.67E+10), got 5.0E+10; give the "
                "parameters used per token (Mixtral-8x7B: 12.9e9 of 46.7e9)"
            ),
        ),
    ],
    ids=["unknown method", "no active parameters", "more active than in all"],
)
def test_invalid_shape_names_the_key(tmp_path: Path, model: str, expected: str) -> None:
    path = budget_file(
        tmp_path,
        f"{model}, parameters: 46.7e9, tokens: 1e12, mfu: 0.3, gpu_peak_tflops: 989, gpus: 8, gpu_hour_price: 1",
    )

    with pytest.raises(BudgetError) as raised:
        load_budget(path)

    assert str(raised.value) == f"{path}: {expected}"
