"""The budget file format (`budgets/<run>.yaml`): its sections, keys and rules.

Every number is a `decimal.Decimal`: pydantic reads a YAML float through its shortest text form,
so `0.023` stays 0.023, and `7.0e9`, which PyYAML leaves a string, parses to the same Decimal.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import date
from decimal import Decimal
from typing import Annotated, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    Strict,
    Tag,
    ValidationInfo,
    field_validator,
    model_validator,
)

from pipelines.config_rules import not_below
from pipelines.plans.methods import TRAINING_FLOPS_PER_PARAMETER
from pipelines.plans.settings import DataLoadingShare, LowGpuUtilization, ThresholdLevels
from pipelines.sources.mappings import COST_CATEGORIES, currency_problem
from pipelines.warehouse.decimal_text import AMOUNT_LIMIT

SECTION_CATEGORIES = {"compute": "model", "storage": "storage", "network": "network"}
"""Categories a budget section derives, which `fixed` must then leave out."""


def cost_behavior(category: str, fixed: Iterable[str]) -> str:
    """The one rule of a cost line's behaviour: `fixed` for a `fixed:` line (an amount that does
    not scale with the run), else `elastic` for the categories the sections derive from the run's
    size (GPU-hours, wall-clock hours, egress), `fixed` for every other category.

    Args:
        category: the line's cost category.
        fixed: the categories the budget gives as `fixed:` amounts (none for spend no budget line plans).
    """
    return "elastic" if category in SECTION_CATEGORIES and category not in fixed else "fixed"


class InvalidValue(ValueError):
    """A validator's complaint about `key`, a key below the field being validated."""

    def __init__(self, message: str, *, key: str) -> None:
        super().__init__(message)
        self.key = key


WAREHOUSE_INTEGER_LIMIT = 2**31 - 1
"""Counts of the budget tables (checkpoints_retained) are INTEGER."""


class OutOfRange(ValueError):
    """A budget number, given or estimated, that the warehouse's budget tables cannot hold."""


def require_storable(value: Decimal | int) -> Decimal | int:
    """The one range rule of budget numbers: what the budget tables and RunLedger's arithmetic
    on them hold (`AMOUNT_LIMIT`, docs/semantics.md "Amounts").

    Raises:
        OutOfRange: a Decimal of 10^15 or more in magnitude, or an integer above 2^31 - 1.
    """
    if isinstance(value, int):
        if abs(value) > WAREHOUSE_INTEGER_LIMIT:
            raise OutOfRange(f"must be at most {WAREHOUSE_INTEGER_LIMIT:,} (the warehouse's INTEGER), got {value}")
    elif abs(value) >= AMOUNT_LIMIT:
        raise OutOfRange(
            f"must be below 10^15, the largest number RunLedger holds, got {value}; check its unit and exponent "
            "(docs/semantics.md#amounts)"
        )
    return value


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


def _require_currency_code(currency: str) -> str:
    problem = currency_problem(currency)
    if problem:
        raise ValueError(f"{problem}, got {currency!r}")
    return currency


CurrencyCode = Annotated[str, AfterValidator(_require_currency_code)]
PositiveNumber = Annotated[Decimal, AfterValidator(_require_positive), AfterValidator(require_storable)]
NonNegativeNumber = Annotated[Decimal, AfterValidator(_require_non_negative), AfterValidator(require_storable)]
MfuFraction = Annotated[Decimal, AfterValidator(_require_mfu_fraction)]
PositiveCount = Annotated[int, Strict(), AfterValidator(_require_positive), AfterValidator(require_storable)]
NonNegativeCount = Annotated[int, Strict(), AfterValidator(_require_non_negative), AfterValidator(require_storable)]


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


Method = Literal["pretrain", "sft", "dpo", "lora", "qlora", "ppo"]


def flops_per_token(method: Method, parameters: Decimal, active_parameters: Decimal | None) -> Decimal:
    """Training FLOPs per token processed: the method's factor x the parameters each token uses
    (the active ones of a mixture of experts, else all)."""
    used = active_parameters if active_parameters is not None else parameters
    return TRAINING_FLOPS_PER_PARAMETER[method] * used


class ResourceModel(_Section):
    """The training job that derives the compute estimate.

    The speed is either `mfu` (a fraction of `gpu_peak_tflops`) or the measured
    `tokens_per_second_per_gpu`; `batch_size` (sequences per optimizer step, global) and
    `sequence_length` (tokens per sequence) together give the number of training steps. `method`
    and `active_parameters` (a mixture of experts' parameters used per token) set the training
    FLOPs per token. `gpus_per_node` (8 on the usual GPU instances) gives the nodes, whose
    volumes the storage estimate counts.
    """

    method: Method = "pretrain"
    parameters: PositiveNumber
    active_parameters: PositiveNumber | None = None
    tokens: PositiveNumber
    gpu_peak_tflops: PositiveNumber | None = None
    mfu: MfuFraction | None = None
    tokens_per_second_per_gpu: PositiveNumber | None = None
    overhead: NonNegativeNumber = Decimal(0)
    gpus: PositiveCount
    gpus_per_node: PositiveCount = 8
    gpu_hour_price: NonNegativeNumber
    batch_size: PositiveCount | None = None
    sequence_length: PositiveCount | None = None

    @property
    def nodes(self) -> int:
        """The nodes the run's GPUs take: gpus / gpus_per_node, rounded up."""
        return -(-self.gpus // self.gpus_per_node)

    @property
    def flops_per_token(self) -> Decimal:
        """Training FLOPs per token processed (`flops_per_token`)."""
        return flops_per_token(self.method, self.parameters, self.active_parameters)

    @model_validator(mode="after")
    def _active_within_total(self) -> ResourceModel:
        if self.active_parameters is not None and self.active_parameters > self.parameters:
            raise InvalidValue(
                f"must be at most `parameters` ({self.parameters}), got {self.active_parameters}; give the "
                "parameters used per token (Mixtral-8x7B: 12.9e9 of 46.7e9)",
                key="active_parameters",
            )
        return self

    @model_validator(mode="after")
    def _one_speed(self) -> ResourceModel:
        if self.mfu is not None and self.tokens_per_second_per_gpu is not None:
            raise InvalidValue(
                "cannot be given together with `mfu`: give the speed either as MFU or as measured throughput",
                key="tokens_per_second_per_gpu",
            )
        if self.mfu is None and self.tokens_per_second_per_gpu is None:
            raise InvalidValue(
                "required key is missing; give `mfu` (with `gpu_peak_tflops`) or the measured "
                "`tokens_per_second_per_gpu`",
                key="mfu",
            )
        if self.mfu is not None and self.gpu_peak_tflops is None:
            raise InvalidValue(
                "required key is missing; `mfu` is a fraction of the peak, so give the GPU's "
                "dense peak TFLOP/s at the training precision (e.g. 989 for H100 BF16)",
                key="gpu_peak_tflops",
            )
        if (self.batch_size is None) != (self.sequence_length is None):
            missing = "sequence_length" if self.sequence_length is None else "batch_size"
            raise InvalidValue(
                "required key is missing; training steps need both `batch_size` (sequences "
                "per step) and `sequence_length` (tokens per sequence)",
                key=missing,
            )
        return self


class Storage(_Section):
    """Checkpoints and dataset, and each node's volumes (`node_volume_gb`, at
    `volume_price_gb_month`, else `price_gb_month`), kept for the run's wall-clock duration."""

    checkpoint_gb: NonNegativeNumber
    checkpoints_retained: NonNegativeCount
    dataset_gb: NonNegativeNumber
    price_gb_month: NonNegativeNumber
    node_volume_gb: NonNegativeNumber = Decimal(0)
    volume_price_gb_month: NonNegativeNumber | None = None

    @property
    def volume_price(self) -> Decimal:
        """The price per GB-month of the node volumes: `volume_price_gb_month`, else `price_gb_month`."""
        return self.volume_price_gb_month if self.volume_price_gb_month is not None else self.price_gb_month


class Network(_Section):
    """Data transferred out during the run."""

    egress_gb: NonNegativeNumber
    price_gb: NonNegativeNumber


class CostThresholds(_Section):
    """Status thresholds as fractions of the estimate (of a run) or of the amount (of a group)."""

    warning: PositiveNumber
    over: PositiveNumber

    @field_validator("over")
    @classmethod
    def _over_at_least_warning(cls, over: Decimal, info: ValidationInfo) -> Decimal:
        return not_below(over, info.data.get("warning"), "thresholds.warning")


class Thresholds(CostThresholds):
    """Status thresholds as fractions of the estimate, and the run's own levels of the thresholds
    besides cost (each None: runledger.yaml's `thresholds:`, else these cost fractions)."""

    gpu_hours: ThresholdLevels | None = None
    wall_clock: ThresholdLevels | None = None
    storage: ThresholdLevels | None = None
    daily_spend_anomaly: ThresholdLevels | None = None
    low_gpu_utilization: LowGpuUtilization | None = None
    data_loading_share: DataLoadingShare | None = None


class Budget(_Section):
    """One run's budget baseline, as written in `budgets/<run>.yaml`."""

    training_run: str
    currency: CurrencyCode
    window: Window
    model: ResourceModel | None = None
    storage: Storage | None = None
    network: Network | None = None
    fixed: dict[str, NonNegativeNumber] = {}
    thresholds: Thresholds
    checkpoint_write_seconds: PositiveNumber | None = None

    @field_validator("training_run")
    @classmethod
    def _run_id_not_blank(cls, training_run: str) -> str:
        if not training_run.strip() or training_run != training_run.strip():
            raise ValueError(f"must be the run id without surrounding blanks, got {training_run!r}")
        return training_run

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
            if category not in COST_CATEGORIES:
                raise InvalidValue(f"unknown cost category; use one of {', '.join(COST_CATEGORIES)}", key=category)
        for category, section in SECTION_CATEGORIES.items():
            if category in fixed and info.data.get(section) is not None:
                raise InvalidValue(
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


SCOPE_KINDS = ("experiment", "owner", "dataset_version", "cluster")
"""The dimensions a group budget's `scope` may name besides a custom dimension of attribution.dimensions."""

AMOUNT_TOTAL = "total"
AMOUNT_CATEGORIES = "per category"
"""The two forms of a group budget's `amount` (pydantic names them in an error's key path)."""

YEAR_MONTH = re.compile(r"\d{4}-(0[1-9]|1[0-2])")


class GroupBudget(_Section):
    """A budget of every run and resource carrying one dimension value (a sweep's experiment, a
    team's owner, ...), as written in `budgets/<name>.yaml` with `scope:` in place of `training_run:`.

    `amount` is the budget of each period: one number (the total) or an amount per cost category
    (the total being their sum). `period: monthly` budgets every billing period from `from`
    (YYYY-MM) on; `window` budgets the days [start, end) once.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    scope: dict[str, str]
    currency: CurrencyCode
    period: Literal["monthly"] | None = None
    window: Window | None = None
    amount: Annotated[
        Annotated[PositiveNumber, Tag(AMOUNT_TOTAL)] | Annotated[dict[str, NonNegativeNumber], Tag(AMOUNT_CATEGORIES)],
        Discriminator(lambda value: AMOUNT_CATEGORIES if isinstance(value, dict) else AMOUNT_TOTAL),
    ]
    thresholds: CostThresholds
    from_: str | None = Field(default=None, alias="from")

    @field_validator("scope")
    @classmethod
    def _one_dimension(cls, scope: dict[str, str]) -> dict[str, str]:
        if len(scope) != 1:
            raise ValueError(
                f"must name exactly one dimension and its value, e.g. {{owner: team-llm}}, got {len(scope)} keys"
            )
        ((kind, value),) = scope.items()
        if kind == "training_run":
            raise InvalidValue("a run's budget is written with `training_run:` instead of `scope:`", key=kind)
        if not value.strip() or value != value.strip():
            raise InvalidValue(f"must be the dimension's value without surrounding blanks, got {value!r}", key=kind)
        return scope

    @field_validator("amount")
    @classmethod
    def _amount_categories(cls, amount: Decimal | dict[str, Decimal]) -> Decimal | dict[str, Decimal]:
        if isinstance(amount, dict):
            if not amount:
                raise ValueError("must be a number (the total) or give at least one cost category's amount")
            for category in amount:
                if category not in COST_CATEGORIES:
                    raise InvalidValue(f"unknown cost category; use one of {', '.join(COST_CATEGORIES)}", key=category)
            require_storable(sum(amount.values(), Decimal(0)))
        return amount

    @field_validator("from_")
    @classmethod
    def _year_month(cls, from_: str | None) -> str | None:
        if from_ is not None and not YEAR_MONTH.fullmatch(from_):
            raise ValueError(f"must be a billing period as YYYY-MM (e.g. 2026-10), got {from_!r}")
        return from_

    @model_validator(mode="after")
    def _one_period(self) -> GroupBudget:
        if (self.period is None) == (self.window is None):
            raise InvalidValue(
                "give either `period: monthly` or a `window:` with start and end, not both and not neither",
                key="period",
            )
        if self.from_ is not None and self.window is not None:
            raise InvalidValue("applies to `period: monthly` only; a window starts at window.start", key="from")
        return self

    @property
    def scope_kind(self) -> str:
        """The dimension the budget scopes (`experiment`, `owner`, ... or a custom dimension)."""
        return next(iter(self.scope))

    @property
    def scope_value(self) -> str:
        """The dimension value whose spend the budget counts."""
        return next(iter(self.scope.values()))

    @property
    def period_name(self) -> str:
        """`monthly`, or the window's start date: with the scope, what identifies the budget."""
        return self.period or self.window.start.isoformat()

    @property
    def amounts(self) -> dict[str, Decimal]:
        """The amount per cost category, `total` for a budget given as one number."""
        return self.amount if isinstance(self.amount, dict) else {"total": self.amount}


SECTIONS: dict[tuple[str, ...], type[BaseModel]] = {
    (): Budget,
    ("window",): Window,
    ("model",): ResourceModel,
    ("storage",): Storage,
    ("network",): Network,
    ("thresholds",): Thresholds,
    ("thresholds", "gpu_hours"): ThresholdLevels,
    ("thresholds", "wall_clock"): ThresholdLevels,
    ("thresholds", "storage"): ThresholdLevels,
    ("thresholds", "daily_spend_anomaly"): ThresholdLevels,
    ("thresholds", "low_gpu_utilization"): LowGpuUtilization,
    ("thresholds", "data_loading_share"): DataLoadingShare,
}
"""The model of each section of a run's budget file, by its key path (the file itself at `()`)."""

GROUP_SECTIONS: dict[tuple[str, ...], type[BaseModel]] = {
    (): GroupBudget,
    ("window",): Window,
    ("thresholds",): CostThresholds,
}
"""The model of each section of a group budget file, by its key path."""
