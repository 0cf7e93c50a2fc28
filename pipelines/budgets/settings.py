"""Alert settings: where budget alerts are delivered (`alerts:`) and the thresholds besides
cost (`thresholds:`)."""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Annotated, Literal

from pydantic import AfterValidator, Field, ValidationInfo, field_validator, model_validator

from pipelines.config_rules import HostName, StrictModel, not_below, unique_names

ENV_VAR_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
EMAIL_ADDRESS = re.compile(r"^[^@\s<>]+@[^@\s<>]+$")


def _env_var_name(value: str | None) -> str | None:
    if value is not None and not ENV_VAR_NAME.match(value):
        raise ValueError(f"{value!r} is not the name of an environment variable (letters, digits and _)")
    return value


def _email_address(value: str) -> str:
    if not EMAIL_ADDRESS.match(value):
        raise ValueError(f"{value!r} is not an email address like finops@example.com")
    return value


EnvVarName = Annotated[str, AfterValidator(_env_var_name)]
EmailAddress = Annotated[str, AfterValidator(_email_address)]


class _Destination(StrictModel):
    """What every alert destination has: a unique name and, optionally, the owners whose runs'
    alerts it receives (every run's when left out)."""

    name: str = Field(min_length=1)
    owners: list[str] | None = Field(default=None, min_length=1)


class WebhookDestination(_Destination):
    """An HTTP endpoint taking a POST: `slack` (a Slack-compatible incoming webhook, `{"text": …}`)
    or `webhook` (the alert as a JSON object); its URL, a secret, is read from the environment."""

    kind: Literal["slack", "webhook"]
    url_env: EnvVarName


class SmtpDestination(_Destination):
    """Plain-text email over SMTP; the login, if any, is read from the environment."""

    kind: Literal["smtp"]
    host: HostName
    port: int = Field(default=587, gt=0, lt=65536)
    starttls: bool = False
    username_env: EnvVarName | None = None
    password_env: EnvVarName | None = None
    from_: EmailAddress = Field(alias="from")
    to: list[EmailAddress] = Field(min_length=1)

    @model_validator(mode="after")
    def _login_pair(self) -> SmtpDestination:
        if (self.username_env is None) != (self.password_env is None):
            raise ValueError("give both `username_env` and `password_env`, or neither")
        return self


Destination = Annotated[WebhookDestination | SmtpDestination, Field(discriminator="kind")]


class Alerts(StrictModel):
    """Where the alerts of `budget_alerts` are delivered (`alerts:`), and how hard each delivery
    is tried within one run."""

    destinations: Annotated[list[Destination], unique_names("destination")] = Field(default_factory=list)
    attempts: int = Field(default=3, ge=1, le=10)
    backoff_seconds: float = Field(default=2.0, ge=0, le=60)
    timeout_seconds: float = Field(default=10.0, gt=0, le=120)


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


class AlertThresholds(StrictModel):
    """The thresholds besides cost (`thresholds:`), the defaults of every budget; a budget's own
    `thresholds:` overrides each kind. A kind left out here (gpu_hours, wall_clock, storage) takes
    each budget's cost fractions."""

    gpu_hours: ThresholdLevels | None = None
    wall_clock: ThresholdLevels | None = None
    storage: ThresholdLevels | None = None
    daily_spend_anomaly: DailySpendAnomaly = Field(default_factory=DailySpendAnomaly)
    idle_gpus: IdleGpus = Field(default_factory=IdleGpus)
