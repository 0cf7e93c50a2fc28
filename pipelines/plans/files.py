"""Reading the budget folder: YAML files into validated `Budget`s (a run's, `training_run:`) and
`GroupBudget`s (a group's, `scope:`), problems named by file and key."""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from pipelines.config_rules import ConfigError, excerpt, read_yaml, shorten
from pipelines.plans.estimate import estimate
from pipelines.plans.schema import (
    AMOUNT_CATEGORIES,
    AMOUNT_TOTAL,
    GROUP_SECTIONS,
    SCOPE_KINDS,
    SECTIONS,
    Budget,
    GroupBudget,
    InvalidValue,
    OutOfRange,
)

BUDGET_SUFFIXES = (".yaml", ".yml")


class BudgetError(ValueError):
    """A budget file or folder is unusable; the message names the file and the key at fault."""


def load_budget(path: Path) -> Budget:
    """Reads and validates one budget file.

    Args:
        path: the YAML file; error messages name it as given.

    Raises:
        BudgetError: the file is unreadable, not YAML, or breaks a rule; one line per problem,
            each `<file>: <key path>: <problem>; <what to do>`.
    """
    return validate_budget(_read_yaml(path), path)


def validate_budget(document: dict[str, Any], source: Path | str) -> Budget:
    """Validates a budget document, as read from a file or built by a command.

    Args:
        document: the budget's keys.
        source: what messages name as the budget's file.

    Raises:
        BudgetError: the document breaks a rule; one line per problem, `<source>: <key path>: <problem>`.
    """
    run = document.get("training_run")
    if "scope" in document:
        raise BudgetError(
            f"{source}: scope: a group's budget has no resource model to estimate; give a run's budget "
            "(`training_run:`)"
            if run is None
            else f"{source}: scope: cannot be given together with `training_run`: a budget file budgets one run "
            "(`training_run:`) or one group of runs and resources (`scope:`); split it into two files"
        )
    try:
        budget = Budget.model_validate(document)
    except ValidationError as error:
        raise BudgetError("\n".join(_describe(source, detail, run, SECTIONS) for detail in error.errors())) from None
    try:
        estimate(budget)  # what it derives must fit the budget tables too
    except InvalidValue as error:
        raise BudgetError(f"{source}: {error.key}: {error} (the budget of {budget.training_run!r})") from None
    return budget


def validate_group_budget(document: dict[str, Any], source: Path | str) -> GroupBudget:
    """Validates a group budget document (`scope:`).

    Raises:
        BudgetError: the document breaks a rule; one line per problem, `<source>: <key path>: <problem>`.
    """
    try:
        return GroupBudget.model_validate(document)
    except ValidationError as error:
        raise BudgetError(
            "\n".join(_describe(source, detail, None, GROUP_SECTIONS) for detail in error.errors())
        ) from None


@dataclass(frozen=True)
class BudgetFolder:
    """Every budget of the budget folder, each with its file, sorted by file name.

    Attributes:
        runs: the runs' budgets (`training_run:`).
        groups: the group budgets (`scope:`).
    """

    runs: list[tuple[Budget, Path]]
    groups: list[tuple[GroupBudget, Path]]


def read_budget_folder(folder: Path) -> BudgetFolder:
    """Reads every `*.yaml`/`*.yml` budget of a folder: a file with `scope:` is a group's budget,
    any other a run's.

    Raises:
        BudgetError: the folder is missing, any file is invalid (all problems of all files are
            reported together), two files budget the same training run, or the same scope and
            period.
    """
    if not folder.is_dir():
        raise BudgetError(f"{folder}: budget folder does not exist; create it or fix `budgets` in runledger.yaml")
    paths = sorted(
        (path for path in folder.iterdir() if path.suffix in BUDGET_SUFFIXES and path.is_file()),
        key=lambda path: path.name,
    )
    runs: list[tuple[Budget, Path]] = []
    groups: list[tuple[GroupBudget, Path]] = []
    problems: list[str] = []
    for path in paths:
        try:
            document = _read_yaml(path)
            if "scope" in document and "training_run" not in document:
                groups.append((validate_group_budget(document, path), path))
            else:
                runs.append((validate_budget(document, path), path))
        except BudgetError as error:
            problems.append(str(error))
    problems.extend(_duplicates(runs, lambda budget: budget.training_run, "training_run", "run"))
    problems.extend(
        _duplicates(
            groups,
            lambda group: f"{group.scope_kind}: {group.scope_value} ({group.period_name})",
            "scope",
            "scope and period",
        )
    )
    if problems:
        raise BudgetError("\n".join(problems))
    return BudgetFolder(runs, groups)


def load_budgets_with_files(folder: Path) -> list[tuple[Budget, Path]]:
    """The runs' budgets of a folder (`read_budget_folder`; its group budgets are validated too).

    Raises:
        BudgetError: as `read_budget_folder`.
    """
    return read_budget_folder(folder).runs


def require_scope_dimensions(groups: Iterable[tuple[GroupBudget, Path]], custom_dimensions: Iterable[str]) -> None:
    """Checks that every group budget scopes a dimension RunLedger attributes.

    Args:
        groups: the group budgets with their files.
        custom_dimensions: the custom dimensions of attribution.dimensions.

    Raises:
        BudgetError: one line per budget of another dimension, naming its file and key.
    """
    allowed = [*SCOPE_KINDS, *custom_dimensions]
    problems = [
        f"{path}: scope.{group.scope_kind}: not a dimension RunLedger attributes; use one of {', '.join(allowed)} "
        "(a custom dimension is added under attribution.dimensions in runledger.yaml)"
        for group, path in groups
        if group.scope_kind not in allowed
    ]
    if problems:
        raise BudgetError("\n".join(problems))


def require_existing_scopes(
    groups: Iterable[tuple[GroupBudget, Path]], known: Mapping[str, Iterable[str]], *, where: str
) -> None:
    """Checks that every group budget's scope value is one the data knows.

    Args:
        groups: the group budgets with their files.
        known: per dimension, the values found (in the warehouse's allocations and the run
            registry); a dimension absent from it is not checked.
        where: where the values were looked for, as messages name it.

    Raises:
        BudgetError: one line per budget whose value is unknown, naming its file and key and
            listing the known values, the closest first.
    """
    problems = []
    for group, path in groups:
        if group.scope_kind not in known:
            continue
        values = sorted(set(known[group.scope_kind]))
        if group.scope_value in values:
            continue
        close = difflib.get_close_matches(group.scope_value, values, n=len(values), cutoff=0)
        listed = ", ".join(close) if close else "none"
        problems.append(
            f"{path}: scope.{group.scope_kind}: no {group.scope_kind} {group.scope_value!r} in {where}, so the budget "
            f"counts no spend; known values (closest first): {listed}"
        )
    if problems:
        raise BudgetError("\n".join(problems))


def require_existing_runs(
    budgets_with_files: list[tuple[Budget, Path]],
    registered: set[str],
    attributed: set[str] | None,
    *,
    registry_file: Path | None,
    lake: str,
) -> None:
    """Checks that every budget is for a run that exists.

    A run exists when the run registry lists it or the warehouse has spend attributed to it: a
    budget for a run yet to start needs a registry entry (an `id` is enough).

    Args:
        budgets_with_files: the budgets with their files, as `load_budgets_with_files` returns.
        registered: the run ids of the registry.
        attributed: the runs with attributed spend; None when the warehouse does not exist yet.
        registry_file: the registry named in messages; None when none is configured.
        lake: the lake as messages name it.

    Raises:
        BudgetError: one line per budget of an unknown run, naming its file and key.
    """
    known = registered | (attributed or set())
    registry_text = f"the run registry {registry_file}" if registry_file else "a run registry"
    spend_text = (
        f"spend attributed in {lake}" if attributed is not None else f"spend attributed ({lake} does not exist yet)"
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


def currency_mismatch(budget_file: object, budget_currency: str, training_run: str, billed: str) -> str:
    """The one message of a budget in another currency than its run's spend is billed in."""
    return (
        f"{budget_file}: currency: {budget_currency}, but the allocations of {training_run!r} are billed in "
        f"{billed}; RunLedger does not convert currencies, so set the budget's currency to the billing currency"
    )


def require_budget_currencies(budgets_with_files: list[tuple[Budget, Path]], billed: dict[str, list[str]]) -> None:
    """Checks that every budget is in the currency its run's attributed spend is billed in.

    Args:
        budgets_with_files: the budgets with their files.
        billed: per run with attributed spend, the currencies it is billed in.

    Raises:
        BudgetError: one line per budget in another currency, naming its file and key.
    """
    problems = [
        currency_mismatch(path, budget.currency, budget.training_run, ", ".join(others))
        for budget, path in budgets_with_files
        if (others := [currency for currency in billed.get(budget.training_run, []) if currency != budget.currency])
    ]
    if problems:
        raise BudgetError("\n".join(problems))


def _read_yaml(path: Path) -> dict[str, Any]:
    try:
        document = read_yaml(path)
    except ConfigError as error:
        raise BudgetError(str(error)) from None
    if not isinstance(document, dict):
        found = "an empty file" if document is None else type(document).__name__
        raise BudgetError(
            f"{path}: expected a mapping of budget keys (training_run, currency, window, ...), got {found}"
        )
    return document


def _describe(
    path: Path | str, detail: ErrorDetails, run: object, sections: Mapping[tuple[str, ...], type[BaseModel]]
) -> str:
    """Turns one pydantic error into `<file>: <key path>: <problem>`; a number out of the
    warehouse's range also names the run."""
    loc = [str(part) for part in detail["loc"] if part not in ("[key]", AMOUNT_TOTAL, AMOUNT_CATEGORIES)]
    cause = detail.get("ctx", {}).get("error")
    if isinstance(cause, InvalidValue):
        loc.append(cause.key)
    problem = _problem(detail, tuple(loc[:-1]), cause, sections)
    if isinstance(cause, OutOfRange) and isinstance(run, str):
        problem += f" (the budget of {run!r})"
    key = ".".join(loc)
    return f"{path}: {key}: {problem}" if key else f"{path}: {problem}"


def _problem(
    detail: ErrorDetails, parent: tuple[str, ...], cause: object, sections: Mapping[tuple[str, ...], type[BaseModel]]
) -> str:
    kind = detail["type"]
    if kind == "value_error":
        return shorten(str(cause))
    if kind == "missing":
        if detail["loc"] == ("training_run",):
            return "required key is missing; add it (or `scope:` for a group's budget: an experiment, owner, ...)"
        return "required key is missing; add it"
    if kind == "extra_forbidden":
        model = sections.get(parent)
        allowed = ", ".join(field.alias or name for name, field in model.model_fields.items()) if model else ""
        return f"unknown key; remove it or fix its spelling (expected one of: {allowed})"
    if kind in ("model_type", "dict_type"):
        return f"must be a mapping of keys, got {excerpt(detail['input'])}"
    message = detail["msg"]
    return f"{message[0].lower()}{message[1:]}, got {excerpt(detail['input'])}"


def _duplicates(loaded: list[tuple[Any, Path]], identity: Any, key: str, what: str) -> list[str]:
    """One problem per budget whose identity (a run, or a scope and period) an earlier file budgets."""
    first_file: dict[object, Path] = {}
    problems = []
    for budget, path in loaded:
        name = identity(budget)
        if name in first_file:
            problems.append(
                f"{path}: {key}: {name!r} is already budgeted in {first_file[name]}; keep one budget file per {what}"
            )
        else:
            first_file[name] = path
    return problems
