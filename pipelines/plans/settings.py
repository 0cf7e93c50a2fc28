"""The alert thresholds besides cost (`thresholds:`): the defaults of every budget's levels."""

from __future__ import annotations

from decimal import Decimal

from pydantic import Field, ValidationInfo, field_validator

from pipelines.config_rules import StrictModel, not_below


class ThresholdLevels(StrictModel):
    """A warning and an over level of one alert threshold kind, as fractions or multiples (the one rule
    of both `thresholds:` in runledger.yaml and a budget's `thresholds:`)."""

    warning: Decimal = Field(gt=0, lt=Decimal(10) ** 28)
    over: Decimal = Field(gt=0, lt=Decimal(10) ** 28)

    @field_validator("over")
    @classmethod
    def _over_at_least_warning(cls, over: Decimal, info: ValidationInfo) -> Decimal:
        return not_below(over, info.data.get("warning"), "warning")


class DailySpendAnomaly(ThresholdLevels):
    """A day far above the run's trailing median: the day's spend at `warning` (`over`) times the
    median daily spend of the `trailing_days` days before it, once `minimum_days` of them had spend."""

    warning: Decimal = Field(default=Decimal(3), gt=1, lt=Decimal(10) ** 28)
    over: Decimal = Field(default=Decimal(5), gt=1, lt=Decimal(10) ** 28)
    trailing_days: int = Field(default=7, ge=1, le=366)
    minimum_days: int = Field(default=3, ge=1, le=366)


class IdleGpus(StrictModel):
    """GPU instances with spend and no run: warned at `warning_hours` charged hours, over at `over_hours`."""

    warning_hours: Decimal = Field(default=Decimal(6), gt=0, lt=Decimal(10) ** 28)
    over_hours: Decimal = Field(default=Decimal(24), gt=0, lt=Decimal(10) ** 28)

    @field_validator("over_hours")
    @classmethod
    def _over_at_least_warning(cls, over_hours: Decimal, info: ValidationInfo) -> Decimal:
        return not_below(over_hours, info.data.get("warning_hours"), "warning_hours")


class LowGpuUtilization(StrictModel):
    """A run's GPUs less busy than a level: its hourly mean utilization (0 to 1) below `warning`
    (`over`, the lower level) for `hours` consecutive hours."""

    warning: Decimal = Field(default=Decimal("0.5"), gt=0, le=1)
    over: Decimal = Field(default=Decimal("0.3"), gt=0, le=1)
    hours: int = Field(default=2, ge=1, le=8_784)

    @field_validator("over")
    @classmethod
    def _over_at_most_warning(cls, over: Decimal, info: ValidationInfo) -> Decimal:
        warning = info.data.get("warning")
        if warning is not None and over > warning:
            raise ValueError(f"must be at most warning ({warning}): over is the lower utilization, got {over}")
        return over


class DataLoadingShare(StrictModel):
    """A run's steps waiting for data: its hourly data-wait share (0 to 1) above `warning`
    (`over`) for `hours` consecutive hours."""

    warning: Decimal = Field(default=Decimal("0.15"), ge=0, lt=1)
    over: Decimal = Field(default=Decimal("0.30"), ge=0, lt=1)
    hours: int = Field(default=2, ge=1, le=8_784)

    @field_validator("over")
    @classmethod
    def _over_at_least_warning(cls, over: Decimal, info: ValidationInfo) -> Decimal:
        return not_below(over, info.data.get("warning"), "warning")


class AlertThresholds(StrictModel):
    """The thresholds besides cost (`thresholds:`), the defaults of every budget; a budget's own
    `thresholds:` overrides each kind. A kind left out here (gpu_hours, wall_clock, storage) takes
    each budget's cost fractions."""

    gpu_hours: ThresholdLevels | None = None
    wall_clock: ThresholdLevels | None = None
    storage: ThresholdLevels | None = None
    daily_spend_anomaly: DailySpendAnomaly = Field(default_factory=DailySpendAnomaly)
    idle_gpus: IdleGpus = Field(default_factory=IdleGpus)
    low_gpu_utilization: LowGpuUtilization = Field(default_factory=LowGpuUtilization)
    data_loading_share: DataLoadingShare = Field(default_factory=DataLoadingShare)
