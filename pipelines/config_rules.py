"""The rules every part of `runledger.yaml` shares: the strict model base, weights and the rules
of split weights and alert levels. The configuration error and the one reader of every YAML file
are `pipelines.config_file`'s (no pydantic there), named here too for the settings modules."""

from __future__ import annotations

import re
from collections import Counter
from decimal import Decimal
from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict

from pipelines.config_file import ConfigError as ConfigError
from pipelines.config_file import excerpt as excerpt
from pipelines.config_file import read_yaml as read_yaml
from pipelines.config_file import shorten as shorten

HOST = re.compile(r"^[A-Za-z0-9.\-]+$")


def repeated(names: list[str]) -> list[str]:
    """The names that occur more than once, sorted."""
    return sorted(name for name, count in Counter(names).items() if count > 1)


def unique_names(noun: str) -> AfterValidator:
    """The rule of every list of named entries (sources, rules, destinations): each `name` once.

    Args:
        noun: what the entries are, for the message (`rule` → "rule names must be unique").
    """

    def _check(entries: list) -> list:
        duplicates = repeated([entry.name for entry in entries])
        if duplicates:
            raise ValueError(f"{noun} names must be unique, repeated: {', '.join(duplicates)}")
        return entries

    return AfterValidator(_check)


def _host_name(value: str) -> str:
    if not HOST.match(value):
        raise ValueError(f"{value!r} is not a host name or address")
    return value


HostName = Annotated[str, AfterValidator(_host_name)]
"""A host name or address (letters, digits, `.` and `-`)."""


WEIGHT_DECIMAL_PLACES = 10
"""Decimal places a weight may have: the splits count weights in units of 1e-10."""
MAX_WEIGHT = Decimal(10) ** 6
"""The largest weight: weight units x seconds of overlap must fit the splits' HUGEINT arithmetic."""


def require_weight(weight: Decimal) -> Decimal:
    """The one rule for every weight (run registry and fixed shared-cost splits): a decimal in
    (0, 10^6] with at most 10 decimal places, so that the split counts it exactly."""
    if weight <= 0:
        raise ValueError(f"must be greater than 0, got {weight}")
    if weight > MAX_WEIGHT:
        raise ValueError(f"must be at most 1000000 (weights are relative: scale them all down), got {weight}")
    if weight.as_tuple().exponent < -WEIGHT_DECIMAL_PLACES:
        raise ValueError(
            f"must have at most {WEIGHT_DECIMAL_PLACES} decimal places (the split counts weights in units "
            f"of 1e-10), got {weight}; round it"
        )
    return weight


Weight = Annotated[Decimal, AfterValidator(require_weight)]
"""A weight as written (`0.00001` is read from its text, never through a float's binary value)."""


class StrictModel(BaseModel):
    """A settings model: unknown keys are errors, values are frozen."""

    model_config = ConfigDict(extra="forbid", frozen=True)


def require_split_weights(split: str, weights: dict[str, Decimal] | None) -> None:
    """The one rule for a split's weights (shared-cost and commitment rules): a `fixed` split
    takes weights per training run summing to exactly 1, any other split none."""
    if split != "fixed":
        if weights is not None:
            raise ValueError(f"weights: only a `fixed` split takes weights (this rule splits {split})")
        return
    if not weights:
        raise ValueError("weights: a `fixed` split needs weights per training run, summing to 1")
    total = sum(weights.values())
    if total != 1:
        raise ValueError(f"weights: must sum to exactly 1, they sum to {total}")


def not_below(value: Decimal, lower: Decimal | None, lower_name: str) -> Decimal:
    """The one rule of an `over` level: at least its `warning` level (`lower`, None when that
    failed validation itself), else an error naming the warning key."""
    if lower is not None and value < lower:
        raise ValueError(f"must be at least {lower_name} ({lower}), got {value}")
    return value
