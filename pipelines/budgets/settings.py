"""Where budget alerts are delivered (`alerts:`) and how hard each delivery is tried."""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import AfterValidator, Field, model_validator

from pipelines.config_rules import HostName, StrictModel, unique_names

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
