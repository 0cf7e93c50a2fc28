"""Budget baselines (`budgets/<run>.yaml`) and the resource model that turns them into estimates.

Pure Python, no warehouse access. Every number is a `decimal.Decimal`: pydantic reads a YAML float
through its shortest text form, so `0.023` stays 0.023, and `7.0e9`, which PyYAML leaves a
string, parses to the same Decimal. Estimates are computed at 60 significant digits; money and
hours are quantized to 10 decimal places with ROUND_HALF_EVEN, the scale of the warehouse's
DECIMAL(38, 10).
"""

from __future__ import annotations

import difflib
import math
from dataclasses import dataclass
from datetime import date
from decimal import ROUND_HALF_EVEN, Decimal, localcontext
from fractions import Fraction
from pathlib import Path
from typing import Annotated, Any

import yaml
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Strict,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_core import ErrorDetails

CATEGORIES = ("compute", "storage", "network", "data", "monitoring", "support", "tax", "other")
"""The cost categories of `x_CostCategory`, in report order."""

BUDGET_SUFFIXES = (".yaml", ".yml")
HOURS_PER_MONTH = Decimal(730)
SECONDS_PER_HOUR = Decimal(3600)
TERA = Decimal(10) ** 12
BILLION = Decimal(10) ** 9
DECIMAL_PRECISION = 60
TEN_DECIMALS = Decimal("1e-10")
SECTION_CATEGORIES = {"compute": "model", "storage": "storage", "network": "network"}
"""Categories a budget section derives, which `fixed` must then leave out."""


class BudgetError(ValueError):
    """A budget file or folder is unusable; the message names the file and the key at fault."""


class _InvalidValue(ValueError):
    """A validator's complaint about `key`, a key below the field being validated."""

    def __init__(self, message: str, *, key: str) -> None:
        super().__init__(message)
        self.key = key


def _require_positive(value: Decimal | int) -> Decimal | int:
    if value <= 0:
        raise ValueError(f"must be greater than 0, got {value}")
    return value


def _require_non_negative(value: Decimal | int) -> Decimal | int:
    if value < 0:
        raise ValueError(f"must be 0 or more, got {value}")
    return value


def _require_mfu_fraction(value: Decimal) -> Decimal:
    if not 0 < value <= 1:
        raise ValueError(
            f"must be in (0, 1], got {value}; give the model FLOPs utilization as a fraction "
            "of the peak, e.g. 0.40 for 40 %"
        )
    return value


PositiveNumber = Annotated[Decimal, AfterValidator(_require_positive)]
NonNegativeNumber = Annotated[Decimal, AfterValidator(_require_non_negative)]
MfuFraction = Annotated[Decimal, AfterValidator(_require_mfu_fraction)]
PositiveCount = Annotated[int, Strict(), AfterValidator(_require_positive)]
NonNegativeCount = Annotated[int, Strict(), AfterValidator(_require_non_negative)]


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Window(_Section):
    """The run's planned time window, [start, end) in UTC dates."""

    start: date
    end: date

    @field_validator("end")
    @classmethod
    def _end_after_start(cls, end: date, info: ValidationInfo) -> date:
        start = info.data.get("start")
        if start is not None and end <= start:
            raise ValueError(f"must be after window.start ({start}), got {end}")
        return end


class ResourceModel(_Section):
    """The training job that derives the compute estimate (SPEC section 7).

    The speed is either `mfu` (a fraction of `gpu_peak_tflops`) or the measured
    `tokens_per_second_per_gpu`; `batch_size` (sequences per optimizer step, global) and
    `sequence_length` (tokens per sequence) together give the number of training steps.
    """

    parameters: PositiveNumber
    tokens: PositiveNumber
    gpu_peak_tflops: PositiveNumber | None = None
    mfu: MfuFraction | None = None
    tokens_per_second_per_gpu: PositiveNumber | None = None
    overhead: NonNegativeNumber = Decimal(0)
    gpus: PositiveCount
    gpu_hour_price: NonNegativeNumber
    batch_size: PositiveCount | None = None
    sequence_length: PositiveCount | None = None

    @model_validator(mode="after")
    def _one_speed(self) -> ResourceModel:
        if self.mfu is not None and self.tokens_per_second_per_gpu is not None:
            raise _InvalidValue(
                "cannot be given together with `mfu`: give the speed either as MFU or as measured throughput",
                key="tokens_per_second_per_gpu",
            )
        if self.mfu is None and self.tokens_per_second_per_gpu is None:
            raise _InvalidValue(
                "required key is missing; give `mfu` (with `gpu_peak_tflops`) or the measured "
                "`tokens_per_second_per_gpu`",
                key="mfu",
            )
        if self.mfu is not None and self.gpu_peak_tflops is None:
            raise _InvalidValue(
                "required key is missing; `mfu` is a fraction of the peak, so give the GPU's "
                "dense peak TFLOP/s at the training precision (e.g. 989 for H100 BF16)",
                key="gpu_peak_tflops",
            )
        if (self.batch_size is None) != (self.sequence_length is None):
            missing = "sequence_length" if self.sequence_length is None else "batch_size"
            raise _InvalidValue(
                "required key is missing; training steps need both `batch_size` (sequences "
                "per step) and `sequence_length` (tokens per sequence)",
                key=missing,
            )
        return self


class Storage(_Section):
    """Checkpoints and dataset kept for the run's wall-clock duration."""

    checkpoint_gb: NonNegativeNumber
    checkpoints_retained: NonNegativeCount
    dataset_gb: NonNegativeNumber
    price_gb_month: NonNegativeNumber


class Network(_Section):
    """Data transferred out during the run."""

    egress_gb: NonNegativeNumber
    price_gb: NonNegativeNumber


class Thresholds(_Section):
    """Status thresholds as fractions of the estimate."""

    warning: PositiveNumber
    over: PositiveNumber

    @field_validator("over")
    @classmethod
    def _over_at_least_warning(cls, over: Decimal, info: ValidationInfo) -> Decimal:
        warning = info.data.get("warning")
        if warning is not None and over < warning:
            raise ValueError(f"must be at least thresholds.warning ({warning}), got {over}")
        return over


class Budget(_Section):
    """One run's budget baseline, as written in `budgets/<run>.yaml`."""

    training_run: str
    currency: str
    window: Window
    model: ResourceModel | None = None
    storage: Storage | None = None
    network: Network | None = None
    fixed: dict[str, NonNegativeNumber] = {}
    thresholds: Thresholds

    @field_validator("training_run")
    @classmethod
    def _run_id_not_blank(cls, training_run: str) -> str:
        if not training_run.strip() or training_run != training_run.strip():
            raise ValueError(f"must be the run id without surrounding blanks, got {training_run!r}")
        return training_run

    @field_validator("currency")
    @classmethod
    def _currency_code(cls, currency: str) -> str:
        if len(currency) != 3 or not currency.isascii() or not currency.isupper():
            raise ValueError(f"must be a 3-letter ISO 4217 code in capitals such as USD, got {currency!r}")
        return currency

    @field_validator("storage")
    @classmethod
    def _storage_needs_model(cls, storage: Storage | None, info: ValidationInfo) -> Storage | None:
        if storage is not None and "model" in info.data and info.data["model"] is None:
            raise ValueError(
                "needs `model`: storage cost scales with the run's wall-clock hours; add `model` "
                "or give the storage amount as fixed.storage"
            )
        return storage

    @field_validator("fixed")
    @classmethod
    def _fixed_categories(cls, fixed: dict[str, Decimal], info: ValidationInfo) -> dict[str, Decimal]:
        for category in fixed:
            if category not in CATEGORIES:
                raise _InvalidValue(f"unknown cost category; use one of {', '.join(CATEGORIES)}", key=category)
        for category, section in SECTION_CATEGORIES.items():
            if category in fixed and info.data.get(section) is not None:
                raise _InvalidValue(
                    f"cannot be given together with `{section}`, which derives the {category} "
                    "estimate; remove one of the two",
                    key=category,
                )
        return fixed

    @model_validator(mode="after")
    def _has_some_cost(self) -> Budget:
        if self.model is None and self.storage is None and self.network is None and not self.fixed:
            raise ValueError("has no cost: give at least one of model, storage, network or fixed")
        return self


_SECTIONS: dict[tuple[str, ...], type[BaseModel]] = {
    (): Budget,
    ("window",): Window,
    ("model",): ResourceModel,
    ("storage",): Storage,
    ("network",): Network,
    ("thresholds",): Thresholds,
}


@dataclass(frozen=True)
class Estimate:
    """The resource model's pre-training estimate of one budget.

    Every field but `costs` and `total` is None without `model`.

    Attributes:
        flops: training FLOPs, 6 x parameters x tokens.
        gpu_hours: GPU-hours including overhead, quantized.
        wall_hours: gpu_hours / gpus, quantized: the wall-clock time of the run.
        costs: estimated cost per category present in the budget, in `CATEGORIES` order.
        total: sum of `costs`.
        cost_per_billion_tokens: total / (tokens / 1e9), quantized.
        mfu: the given MFU, or the one implied by the given throughput and peak (None without
            `gpu_peak_tflops`).
        tokens_per_second_per_gpu: the given throughput, or the one implied by the given MFU.
        gpu_hours_at_peak: the GPU-hours the FLOPs take at the full peak (MFU 1, no overhead);
            None without `gpu_peak_tflops`.
        effective_mfu: gpu_hours_at_peak / gpu_hours, the MFU over every estimated GPU-hour
            (overhead included), comparable with budget_variance.actual_effective_mfu.
        tokens_per_step: batch_size x sequence_length; None without them.
        steps: optimizer steps, tokens / tokens_per_step rounded up; None without them.
    """

    flops: Decimal | None
    gpu_hours: Decimal | None
    wall_hours: Decimal | None
    costs: dict[str, Decimal]
    total: Decimal
    cost_per_billion_tokens: Decimal | None
    mfu: Decimal | None = None
    tokens_per_second_per_gpu: Decimal | None = None
    gpu_hours_at_peak: Decimal | None = None
    effective_mfu: Decimal | None = None
    tokens_per_step: int | None = None
    steps: int | None = None


@dataclass(frozen=True)
class _Speed:
    mfu: Decimal | None
    tokens_per_second_per_gpu: Decimal
    gpu_hours_at_peak: Decimal | None
    ideal_gpu_hours: Decimal


def load_budget(path: Path) -> Budget:
    """Reads and validates one budget file.

    Args:
        path: the YAML file; error messages name it as given.

    Raises:
        BudgetError: the file is unreadable, not YAML, or breaks a rule; one line per problem,
            each `<file>: <key path>: <problem>; <what to do>`.
    """
    document = _read_yaml(path)
    try:
        return Budget.model_validate(document)
    except ValidationError as error:
        raise BudgetError("\n".join(_describe(path, detail) for detail in error.errors())) from None


def load_budgets_with_files(folder: Path) -> list[tuple[Budget, Path]]:
    """Reads every `*.yaml`/`*.yml` budget of a folder, sorted by file name, with its file.

    Raises:
        BudgetError: the folder is missing, any file is invalid (all problems of all files are
            reported together), or two files budget the same training run.
    """
    if not folder.is_dir():
        raise BudgetError(f"{folder}: budget folder does not exist; create it or fix `budgets` in runledger.yaml")
    paths = sorted(
        (path for path in folder.iterdir() if path.suffix in BUDGET_SUFFIXES and path.is_file()),
        key=lambda path: path.name,
    )
    loaded: list[tuple[Budget, Path]] = []
    problems: list[str] = []
    for path in paths:
        try:
            loaded.append((load_budget(path), path))
        except BudgetError as error:
            problems.append(str(error))
    problems.extend(_duplicate_runs(loaded))
    if problems:
        raise BudgetError("\n".join(problems))
    return loaded


def require_existing_runs(
    budgets_with_files: list[tuple[Budget, Path]],
    registered: set[str],
    attributed: set[str] | None,
    *,
    registry_file: Path | None,
    warehouse_file: Path,
) -> None:
    """Checks that every budget is for a run that exists.

    A run exists when the run registry lists it or the warehouse has spend attributed to it: a
    budget for a run yet to start needs a registry entry (an `id` is enough).

    Args:
        budgets_with_files: the budgets with their files, as `load_budgets_with_files` returns.
        registered: the run ids of the registry.
        attributed: the runs with attributed spend; None when the warehouse does not exist yet.
        registry_file: the registry named in messages; None when none is configured.
        warehouse_file: the warehouse named in messages.

    Raises:
        BudgetError: one line per budget of an unknown run, naming its file and key.
    """
    known = registered | (attributed or set())
    registry_text = f"the run registry {registry_file}" if registry_file else "a run registry"
    spend_text = (
        f"spend attributed in {warehouse_file}"
        if attributed is not None
        else f"spend attributed ({warehouse_file} does not exist yet)"
    )
    problems = []
    for budget, path in budgets_with_files:
        if budget.training_run in known:
            continue
        close = difflib.get_close_matches(budget.training_run, sorted(known), n=1)
        hint = f"did you mean {close[0]!r}? " if close else ""
        problems.append(
            f"{path}: training_run: no run {budget.training_run!r}: it is neither in "
            f"{registry_text} nor has {spend_text}; {hint}fix the id, or register the run "
            f"(`- id: {budget.training_run}` under `runs:`)"
        )
    if problems:
        raise BudgetError("\n".join(problems))


def load_budgets(folder: Path) -> list[Budget]:
    """Reads every budget of a folder; see `load_budgets_with_files`."""
    return [budget for budget, _ in load_budgets_with_files(folder)]


def estimate(budget: Budget) -> Estimate:
    """Applies the resource model of SPEC section 7 to a budget.

    With `mfu`: GPU-hours = 6 N D / (peak x 1e12 x mfu x 3600) x (1 + overhead). With
    `tokens_per_second_per_gpu`: GPU-hours = tokens / (throughput x 3600) x (1 + overhead).
    """
    with localcontext(prec=DECIMAL_PRECISION):
        costs: dict[str, Decimal] = {}
        if budget.network is not None:
            costs["network"] = _quantize(budget.network.egress_gb * budget.network.price_gb)
        costs.update({category: _quantize(amount) for category, amount in budget.fixed.items()})
        model = budget.model
        if model is None:
            ordered = _ordered(costs)
            return Estimate(None, None, None, ordered, sum(ordered.values(), Decimal(0)), None)
        flops = 6 * model.parameters * model.tokens
        speed = _speed(model, flops)
        gpu_hours = _quantize(speed.ideal_gpu_hours * (1 + model.overhead))
        wall_hours = _quantize(gpu_hours / model.gpus)
        costs["compute"] = _quantize(gpu_hours * model.gpu_hour_price)
        if budget.storage is not None:
            costs["storage"] = _storage_cost(budget.storage, wall_hours)
        ordered = _ordered(costs)
        total = sum(ordered.values(), Decimal(0))
        tokens_per_step = steps = None
        if model.batch_size is not None and model.sequence_length is not None:
            tokens_per_step = model.batch_size * model.sequence_length
            steps = math.ceil(Fraction(model.tokens) / tokens_per_step)
        return Estimate(
            flops=flops,
            gpu_hours=gpu_hours,
            wall_hours=wall_hours,
            costs=ordered,
            total=total,
            cost_per_billion_tokens=_quantize(total / (model.tokens / BILLION)),
            mfu=_quantize(speed.mfu) if speed.mfu is not None else None,
            tokens_per_second_per_gpu=_quantize(speed.tokens_per_second_per_gpu),
            gpu_hours_at_peak=(_quantize(speed.gpu_hours_at_peak) if speed.gpu_hours_at_peak is not None else None),
            effective_mfu=(
                _quantize(speed.gpu_hours_at_peak / gpu_hours)
                if speed.gpu_hours_at_peak is not None and gpu_hours
                else None
            ),
            tokens_per_step=tokens_per_step,
            steps=steps,
        )


def format_estimate(budget: Budget, estimate: Estimate) -> str:
    """Renders an estimate as the plain-text table `runledger estimate` prints."""
    lines = [
        (
            f"Estimate for {budget.training_run}: window {budget.window.start} to "
            f"{budget.window.end}, amounts in {budget.currency}"
        ),
        "",
    ]
    if budget.model is not None:
        lines += _resource_lines(budget.model, estimate)
    lines.append(f"  {'cost category':<28}{budget.currency:>20}")
    lines += [f"  {category:<28}{_money(cost):>20}" for category, cost in estimate.costs.items()]
    lines.append(f"  {'total':<28}{_money(estimate.total):>20}")
    if estimate.cost_per_billion_tokens is not None:
        lines.append(f"  {'cost per 1e9 tokens':<28}{_money(estimate.cost_per_billion_tokens):>20}")
    return "\n".join(lines) + "\n"


def baseline_rows(budget: Budget, source_file: Path | str) -> list[dict[str, Any]]:
    """One `budget_baselines` row per estimated category of a budget.

    Only the compute row derived from `model` carries estimated_gpu_hours and estimated_rate
    (= gpu_hour_price), training_tokens and gpu_hours_at_peak (for the actual effective MFU and
    throughput); its estimated_cost is round(estimated_gpu_hours x estimated_rate, 10). Only the
    storage row of a budget with `storage` carries checkpoints_retained (for the waste analysis).
    Every Decimal is quantized to 10 places (DuckDB misreads bound Decimals with a positive
    exponent such as Decimal('1.2E+4')).

    Args:
        budget: the validated budget.
        source_file: the budget's file, stored as `budget_file`.
    """
    result = estimate(budget)
    thresholds = {
        "warning": _quantize(budget.thresholds.warning),
        "over": _quantize(budget.thresholds.over),
    }
    window = {"start": budget.window.start, "end": budget.window.end}
    rows = []
    gpu_hour_price = _quantize(budget.model.gpu_hour_price) if budget.model is not None else None
    for category, cost in result.costs.items():
        derived_compute = category == "compute" and budget.model is not None
        rows.append(
            {
                "training_run": budget.training_run,
                "cost_category": category,
                "currency": budget.currency,
                "estimated_cost": cost,
                "estimated_gpu_hours": result.gpu_hours if derived_compute else None,
                "estimated_rate": gpu_hour_price if derived_compute else None,
                "training_tokens": _quantize(budget.model.tokens) if derived_compute else None,
                "gpu_hours_at_peak": result.gpu_hours_at_peak if derived_compute else None,
                "checkpoints_retained": (
                    budget.storage.checkpoints_retained if category == "storage" and budget.storage else None
                ),
                "thresholds": thresholds,
                "window": window,
                "budget_file": str(source_file),
            }
        )
    return rows


def _read_yaml(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise BudgetError(f"{path}: cannot read the budget file: {error}") from None
    try:
        document = yaml.safe_load(text)
    except yaml.YAMLError as error:
        problem = _yaml_problem(error)
        raise BudgetError(f"{path}: not valid YAML: {problem}; fix the syntax") from None
    if not isinstance(document, dict):
        found = "an empty file" if document is None else type(document).__name__
        raise BudgetError(
            f"{path}: expected a mapping of budget keys (training_run, currency, window, ...), got {found}"
        )
    return document


def _yaml_problem(error: yaml.YAMLError) -> str:
    mark = getattr(error, "problem_mark", None)
    problem = getattr(error, "problem", None) or str(error)
    if mark is None:
        return problem
    return f"line {mark.line + 1}, column {mark.column + 1}: {problem}"


def _describe(path: Path, detail: ErrorDetails) -> str:
    """Turns one pydantic error into `<file>: <key path>: <problem>`."""
    loc = [str(part) for part in detail["loc"] if part != "[key]"]
    cause = detail.get("ctx", {}).get("error")
    if isinstance(cause, _InvalidValue):
        loc.append(cause.key)
    problem = _problem(detail, tuple(loc[:-1]), cause)
    key = ".".join(loc)
    return f"{path}: {key}: {problem}" if key else f"{path}: {problem}"


def _problem(detail: ErrorDetails, parent: tuple[str, ...], cause: object) -> str:
    kind = detail["type"]
    if kind == "value_error":
        return str(cause)
    if kind == "missing":
        return "required key is missing; add it"
    if kind == "extra_forbidden":
        allowed = ", ".join(_SECTIONS[parent].model_fields) if parent in _SECTIONS else ""
        return f"unknown key; remove it or fix its spelling (expected one of: {allowed})"
    if kind in ("model_type", "dict_type"):
        return f"must be a mapping of keys, got {_show(detail['input'])}"
    message = detail["msg"]
    return f"{message[0].lower()}{message[1:]}, got {_show(detail['input'])}"


def _show(value: object) -> str:
    return repr(value) if isinstance(value, str) else str(value)


def _duplicate_runs(loaded: list[tuple[Budget, Path]]) -> list[str]:
    first_file: dict[str, Path] = {}
    problems = []
    for budget, path in loaded:
        if budget.training_run in first_file:
            problems.append(
                f"{path}: training_run: {budget.training_run!r} is already budgeted in "
                f"{first_file[budget.training_run]}; keep one budget file per run"
            )
        else:
            first_file[budget.training_run] = path
    return problems


def _speed(model: ResourceModel, flops: Decimal) -> _Speed:
    """The model's speed both ways (MFU and tokens per second per GPU), whichever was given."""
    peak_flops_per_gpu_second = model.gpu_peak_tflops * TERA if model.gpu_peak_tflops is not None else None
    gpu_hours_at_peak = (
        flops / (peak_flops_per_gpu_second * SECONDS_PER_HOUR) if peak_flops_per_gpu_second is not None else None
    )
    flops_per_token = 6 * model.parameters
    if model.mfu is not None:
        throughput = model.mfu * peak_flops_per_gpu_second / flops_per_token
        return _Speed(model.mfu, throughput, gpu_hours_at_peak, gpu_hours_at_peak / model.mfu)
    throughput = model.tokens_per_second_per_gpu
    implied_mfu = (
        throughput * flops_per_token / peak_flops_per_gpu_second if peak_flops_per_gpu_second is not None else None
    )
    return _Speed(implied_mfu, throughput, gpu_hours_at_peak, model.tokens / (throughput * SECONDS_PER_HOUR))


def _storage_cost(storage: Storage, wall_hours: Decimal) -> Decimal:
    stored_gb = storage.checkpoint_gb * storage.checkpoints_retained + storage.dataset_gb
    return _quantize(stored_gb * storage.price_gb_month * wall_hours / HOURS_PER_MONTH)


def _ordered(costs: dict[str, Decimal]) -> dict[str, Decimal]:
    return {category: costs[category] for category in CATEGORIES if category in costs}


def _quantize(value: Decimal) -> Decimal:
    with localcontext(prec=DECIMAL_PRECISION):
        return value.quantize(TEN_DECIMALS, rounding=ROUND_HALF_EVEN)


def _resource_lines(model: ResourceModel, estimate: Estimate) -> list[str]:
    days = estimate.wall_hours / 24
    mfu_source = "given" if model.mfu is not None else "implied by the throughput"
    throughput_source = "given" if model.tokens_per_second_per_gpu is not None else "implied by MFU"
    lines = [
        f"  {'parameters (N)':<28}{model.parameters:>20.3e}",
        f"  {'tokens (D)':<28}{model.tokens:>20.3e}",
    ]
    if estimate.steps is not None:
        lines.append(
            f"  {'training steps':<28}{estimate.steps:>20,}  ({estimate.tokens_per_step:,} tokens "
            f"per step: batch {model.batch_size:,} x sequence {model.sequence_length:,})"
        )
    lines.append(f"  {'training FLOPs (6 N D)':<28}{estimate.flops:>20.3e}")
    if estimate.mfu is not None:
        lines.append(
            f"  {'MFU':<28}{_percent(estimate.mfu):>20}  ({mfu_source}; peak "
            f"{model.gpu_peak_tflops:,f} TFLOP/s per GPU)"
        )
    lines += [
        f"  {'tokens per second per GPU':<28}{estimate.tokens_per_second_per_gpu:>20,.1f}  ({throughput_source})",
        f"  {'overhead':<28}{_percent(model.overhead):>20}  (restarts, evaluation, idle)",
    ]
    if estimate.effective_mfu is not None:
        lines.append(
            f"  {'effective MFU':<28}{_percent(estimate.effective_mfu):>20}  (over every GPU-hour, overhead included)"
        )
    lines += [
        f"  {'GPU-hours':<28}{estimate.gpu_hours:>20,.2f}",
        f"  {'wall-clock hours':<28}{estimate.wall_hours:>20,.2f}  ({days:,.2f} days on {model.gpus:,} GPUs)",
        "",
    ]
    return lines


def _percent(fraction: Decimal) -> str:
    return f"{fraction * 100:,.1f} %"


def _money(amount: Decimal) -> str:
    return f"{amount:,.2f}"
