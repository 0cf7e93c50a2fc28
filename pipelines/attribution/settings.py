"""Attribution's settings (`attribution:` in runledger.yaml): tag dimensions, the run registry,
shared-cost rules and commitment chargeback."""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import Field, field_validator, model_validator

from pipelines.config_rules import StrictModel, Weight, require_split_weights, unique_names

DEFAULT_DIMENSIONS = {
    "training_run": ["training_run", "training-run", "TrainingRun", "run_id"],
    "experiment": ["experiment"],
    "dataset_version": ["dataset_version", "dataset"],
    "owner": ["owner", "team"],
}

# A dimension of the user's own (attribution.dimensions): its name keys custom_dimensions maps.
CUSTOM_DIMENSION_NAME = re.compile(r"[a-z][a-z0-9_]*")

# Text columns of focus_line_items that name a line itself, not what it bills: no shared rule matches them.
LINE_IDENTITY_COLUMNS = ("x_LineItemKey", "x_SourceFile", "x_DerivedFrom")


def shared_match_columns() -> tuple[str, ...]:
    """The text columns of `focus_line_items` (as its DDL creates them) a shared-cost rule may
    match (sql/attribution/shared_matches.sql): every one but the line's key, file and the key it
    was derived from."""
    from pipelines.warehouse.catalog import table_columns  # the warehouse's DDL, read when a rule is checked

    columns = table_columns("focus_line_items")
    return tuple(name for name, type_ in columns.items() if type_ == "VARCHAR" and name not in LINE_IDENTITY_COLUMNS)


class SharedRule(StrictModel):
    """A shared-cost rule: lines no run claimed whose FOCUS columns match every
    glob of `match` are split among runs."""

    name: str = Field(min_length=1)
    match: dict[str, str]
    split: Literal["proportional", "even", "fixed"]
    weights: dict[str, Weight] | None = None

    @field_validator("match")
    @classmethod
    def _focus_text_columns(cls, match: dict[str, str]) -> dict[str, str]:
        if not match:
            raise ValueError('give at least one FOCUS column glob (`{ChargeCategory: "*"}` matches every line)')
        columns = shared_match_columns()
        unknown = [column for column in match if column not in columns]
        if unknown:
            raise ValueError(
                f"{', '.join(unknown)}: not a text column of focus_line_items; "
                f"columns a rule can match: {', '.join(columns)}"
            )
        return match

    @model_validator(mode="after")
    def _weights_fit_the_split(self) -> SharedRule:
        require_split_weights(self.split, self.weights)
        return self


class CommitmentRule(StrictModel):
    """A chargeback rule: the unused part of every commitment whose CommitmentDiscountId matches
    the glob `commitment` is charged to runs — by fixed weights, or by each run's effective cost
    of the usage that commitment covered in the same billing period (`covered_usage`)."""

    name: str = Field(min_length=1)
    commitment: str = Field(min_length=1)
    split: Literal["covered_usage", "fixed"]
    weights: dict[str, Weight] | None = None

    @model_validator(mode="after")
    def _weights_fit_the_split(self) -> CommitmentRule:
        require_split_weights(self.split, self.weights)
        return self


class Commitments(StrictModel):
    """Charging unused commitment back to runs (`attribution.commitments`): off unless
    `chargeback` is true; the rules apply in order, the first whose glob matches wins."""

    chargeback: bool = False
    rules: Annotated[list[CommitmentRule], unique_names("rule")] = Field(default_factory=list)

    @model_validator(mode="after")
    def _rules_when_on(self) -> Commitments:
        if self.chargeback and not self.rules:
            raise ValueError("rules: `chargeback: true` needs at least one rule naming the commitments to charge")
        return self

    @property
    def active_rules(self) -> list[CommitmentRule]:
        """The rules attribution applies: none while chargeback is off."""
        return self.rules if self.chargeback else []


class IdleCapacity(StrictModel):
    """What happens to a shared cluster's idle capacity (`attribution.idle_capacity`): it stays the
    cluster's (`share: false`, the default), or `proportional` charges each day's idle capacity to
    the runs that held the cluster that day, by their GPU-hours."""

    share: Literal[False, "proportional"] = False


class Attribution(StrictModel):
    """How line items are attributed."""

    dimensions: dict[str, list[str]] = Field(default_factory=lambda: dict(DEFAULT_DIMENSIONS))
    runs: str | None = None
    shared: Annotated[list[SharedRule], unique_names("rule")] = Field(default_factory=list)
    commitments: Commitments = Field(default_factory=Commitments)
    idle_capacity: IdleCapacity = Field(default_factory=IdleCapacity)

    @field_validator("dimensions")
    @classmethod
    def _all_dimensions(cls, value: dict[str, list[str]]) -> dict[str, list[str]]:
        merged = {**DEFAULT_DIMENSIONS, **value}
        for dimension, keys in merged.items():
            if dimension not in DEFAULT_DIMENSIONS and not CUSTOM_DIMENSION_NAME.fullmatch(dimension):
                raise ValueError(
                    f"{dimension}: a dimension's name is lower-case letters, digits and `_`, starting with a letter"
                )
            if not keys:
                raise ValueError(f"{dimension}: give at least one tag key")
        return merged

    @property
    def custom_dimensions(self) -> list[str]:
        """The user's own dimensions (beyond training_run, experiment, dataset_version and owner),
        in the order the config lists them: the keys of cost_allocations.custom_dimensions."""
        return [dimension for dimension in self.dimensions if dimension not in DEFAULT_DIMENSIONS]
