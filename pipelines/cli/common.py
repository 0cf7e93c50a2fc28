"""What every `runledger` command shares: the exit codes and the errors mapped to them, the
--config option, billing periods as `--period` takes them."""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable, Sequence
from datetime import date, datetime
from functools import wraps
from pathlib import Path
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from pipelines.config import RunLedgerConfig

RUN_FAILED = 1
USAGE_ERROR = 2


def echo_err(message: str) -> None:
    click.echo(message, err=True)


# The errors the user fixes in the command or the configuration (exit 2), by module and name: an
# error can only be one of them when its module was imported, so telling one costs no import.
USAGE_ERRORS = (
    ("pipelines.config_file", "ConfigError"),
    ("pipelines.plans.files", "BudgetError"),
    ("pipelines.budgets.pilot", "PilotError"),
    ("pipelines.sources.mappings", "MappingError"),
    ("pipelines.export.focus", "NothingToExport"),
    ("pipelines.cli.common", "UsageProblem"),
    ("pipelines.warehouse.lake", "LakeError"),
    ("pipelines.query", "QueryRefused"),
    ("pipelines.warehouse.sandbox", "SandboxUnavailable"),
)


def is_usage_error(error: BaseException) -> bool:
    """Whether `error` is one the user fixes in the command or the configuration (exit 2)."""
    return any(
        isinstance(error, getattr(sys.modules[module], name)) for module, name in USAGE_ERRORS if module in sys.modules
    )


def handle_errors(command: Callable) -> Callable:
    """Maps errors to exit codes: configuration and usage 2, everything else that fails 1; a
    closed stdout is no error (exit 0)."""

    @wraps(command)
    def wrapper(*args: object, **kwargs: object) -> object:
        try:
            return command(*args, **kwargs)
        except BrokenPipeError:
            # whoever read stdout stopped (`| head`): not an error, and nothing more to print
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            return None
        except Exception as error:  # noqa: BLE001 - every other failure is a failed run, exit 1
            if is_usage_error(error):
                echo_err(f"error: {error}")
                sys.exit(USAGE_ERROR)
            from pipelines.warehouse.repair import explain_file_error

            echo_err(f"run failed: {explain_file_error(error) or error}")
            sys.exit(RUN_FAILED)

    return wrapper


class UsageProblem(ValueError):
    """A command was called in a way it cannot serve (exit 2)."""


def load_config(config_path: Path | None, *, writer: bool = False) -> RunLedgerConfig:
    """The configuration (`pipelines.config.load_config`), its file read before the settings
    models are imported: a missing or malformed file is said at once.

    Raises:
        ConfigError: naming the file and key at fault.
    """
    from pipelines.config_file import read_config_document

    path, document = read_config_document(config_path)

    from pipelines.config import config_from_document

    return config_from_document(path, document, writer=writer)


def config_option(command: Callable) -> Callable:
    return click.option(
        "--config",
        "config_path",
        type=click.Path(path_type=Path, dir_okay=False),
        default=None,
        help="runledger.yaml to use (default: $RUNLEDGER_CONFIG, then ./runledger.yaml).",
    )(command)


# A billing period as `runledger run --period` takes it: YYYY-MM, or Dagster's partition key YYYY-MM-01.
BILLING_PERIOD = re.compile(r"(?P<year>[0-9]{4})-(?P<month>[0-9]{2})(-01)?")


def parse_period(value: str) -> date:
    """A `--period` value as the first day of its month, read without importing anything.

    Raises:
        UsageProblem: neither YYYY-MM nor YYYY-MM-01 with a month from 01 to 12.
    """
    match = BILLING_PERIOD.fullmatch(value)
    if match is None or not 1 <= int(match["month"]) <= 12:
        raise UsageProblem(
            f"--period {value!r} is not a billing period: give YYYY-MM (e.g. 2026-11) "
            "or its Dagster partition key YYYY-MM-01 (e.g. 2026-11-01)"
        )
    return date(int(match["year"]), int(match["month"]), 1)


def require_partitions(values: Sequence[str], periods: Sequence[date]) -> None:
    """Refuses a `--period` that has no Dagster partition (what a run loads into).

    Raises:
        UsageProblem: naming the first such value and the partitions.
    """
    from pipelines.orchestration.partitions import unpartitioned_reason

    for value, period in zip(values, periods, strict=True):
        reason = unpartitioned_reason(period)
        if reason is not None:
            raise UsageProblem(f"--period {value}: {reason}")


AT_HELP = "A snapshot id of the lake or a moment (ISO-8601, UTC unless given): the warehouse as it was then."
SNAPSHOT_ID = re.compile(r"[0-9]+")


def parse_at(text: str | None) -> int | datetime | None:
    """`--at`: a snapshot id (ASCII digits), or a moment in ISO-8601 (UTC unless it says
    otherwise); None when the option is not given.

    Raises:
        UsageProblem: neither (an empty value included).
    """
    if text is None:
        return None
    if SNAPSHOT_ID.fullmatch(text):
        return int(text)
    try:
        if text.isascii():
            return datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        pass
    raise UsageProblem(f"--at {text!r} is neither a snapshot id (e.g. 42) nor a moment (e.g. 2026-11-30T06:00:00Z)")
