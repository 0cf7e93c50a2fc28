"""What every `runledger` command shares: the exit codes and the errors mapped to them, the
--config option, billing periods as `--period` takes them."""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable
from datetime import date
from functools import wraps
from pathlib import Path

import click

RUN_FAILED = 1
USAGE_ERROR = 2


def echo_err(message: str) -> None:
    click.echo(message, err=True)


def handle_errors(command: Callable) -> Callable:
    """Maps errors to exit codes: configuration and usage 2, everything else that fails 1; a
    closed stdout is no error (exit 0)."""

    @wraps(command)
    def wrapper(*args: object, **kwargs: object) -> object:
        from pipelines.budgets.pilot import PilotError
        from pipelines.config_rules import ConfigError
        from pipelines.export import NothingToExport
        from pipelines.plans.files import BudgetError
        from pipelines.query import QueryRefused
        from pipelines.sources.mappings import MappingError
        from pipelines.warehouse.lake import LakeError
        from pipelines.warehouse.repair import explain_file_error
        from pipelines.warehouse.sandbox import SandboxUnavailable

        try:
            return command(*args, **kwargs)
        except BrokenPipeError:
            # whoever read stdout stopped (`| head`): not an error, and nothing more to print
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            return None
        except (
            ConfigError,
            BudgetError,
            PilotError,
            MappingError,
            NothingToExport,
            UsageProblem,
            LakeError,
            QueryRefused,
            SandboxUnavailable,
        ) as error:
            echo_err(f"error: {error}")
            sys.exit(USAGE_ERROR)
        except Exception as error:  # noqa: BLE001 - every other failure is a failed run, exit 1
            echo_err(f"run failed: {explain_file_error(error) or error}")
            sys.exit(RUN_FAILED)

    return wrapper


class UsageProblem(ValueError):
    """A command was called in a way it cannot serve (exit 2)."""


def config_option(command: Callable) -> Callable:
    return click.option(
        "--config",
        "config_path",
        type=click.Path(path_type=Path, dir_okay=False),
        default=None,
        help="runledger.yaml to use (default: $RUNLEDGER_CONFIG, then ./runledger.yaml).",
    )(command)


# A billing period as `runledger run --period` takes it: YYYY-MM, or Dagster's partition key YYYY-MM-01.
BILLING_PERIOD = re.compile(r"^(?P<year>\d{4})-(?P<month>\d{2})(-01)?$")


def parse_period(value: str) -> date:
    """A `--period` value as the first day of its month.

    Raises:
        UsageProblem: neither YYYY-MM nor YYYY-MM-01 with a month from 01 to 12, or a period
            without a partition.
    """
    from pipelines.orchestration.partitions import unpartitioned_reason

    match = BILLING_PERIOD.match(value)
    if match is None or not 1 <= int(match["month"]) <= 12:
        raise UsageProblem(
            f"--period {value!r} is not a billing period: give YYYY-MM (e.g. 2026-11) "
            "or its Dagster partition key YYYY-MM-01 (e.g. 2026-11-01)"
        )
    period = date(int(match["year"]), int(match["month"]), 1)
    reason = unpartitioned_reason(period)
    if reason is not None:
        raise UsageProblem(f"--period {value}: {reason}")
    return period


AT_HELP = "A snapshot id of the lake or a moment (ISO-8601, UTC unless given): the warehouse as it was then."
