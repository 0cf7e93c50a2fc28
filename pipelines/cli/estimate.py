"""`runledger estimate`: a budget file's estimate, or a larger run's budget scaled from a pilot."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING

import click

from pipelines.cli.common import UsageProblem, config_option, handle_errors, load_config
from pipelines.plans.methods import TRAINING_FLOPS_PER_PARAMETER

if TYPE_CHECKING:
    from pipelines.budgets.pilot import ScaledEstimate


def _decimal_option(context: click.Context, parameter: click.Parameter, value: str | None) -> Decimal | None:
    from decimal import InvalidOperation

    if value is None:
        return None
    try:
        number = Decimal(value)
    except InvalidOperation:
        raise click.BadParameter(f"not a number: {value!r} (e.g. 13e9)") from None
    if not number.is_finite():
        raise click.BadParameter(f"not a finite number: {value!r}")
    return number


_SCALING_OPTIONS = ("parameters", "active_parameters", "method", "tokens", "gpus", "scaling_efficiency")


@click.command(
    help=(
        "Print the pre-training estimate of BUDGET_FILE from the resource model; or, with --from-run PILOT, "
        "write the budget of a larger run scaled from a finished pilot's measured throughput, overhead and "
        "rates (the budget YAML on stdout, or into --out with the explanation on stdout). Options not given "
        "keep the pilot's values."
    )
)
@click.argument("budget_file", required=False, type=click.Path(path_type=Path, dir_okay=False))
@click.option("--from-run", "pilot", metavar="PILOT", help="A finished run with progress in the warehouse.")
@config_option
@click.option("--training-run", help="The new run's id (default: PILOT-scaled).")
@click.option("--parameters", callback=_decimal_option, metavar="N", help="Parameters of the new model, e.g. 13e9.")
@click.option(
    "--active-parameters",
    callback=_decimal_option,
    metavar="N",
    help="Parameters used per token of a mixture of experts (e.g. 12.9e9 of 46.7e9).",
)
@click.option("--method", type=click.Choice(list(TRAINING_FLOPS_PER_PARAMETER)), help="Training method.")
@click.option("--tokens", callback=_decimal_option, metavar="D", help="Tokens the new run processes, e.g. 1.3e12.")
@click.option("--gpus", type=click.IntRange(min=1), help="GPUs of the new run.")
@click.option(
    "--scaling-efficiency",
    callback=_decimal_option,
    metavar="E",
    help="Throughput per GPU kept against the pilot's, in (0, 1] (default: 0.9 with more GPUs than the pilot, else 1).",
)
@click.option(
    "--start",
    type=click.DateTime(formats=["%Y-%m-%d"]),
    help="First day of the new run's window (default: today, UTC).",
)
@click.option("--out", type=click.Path(path_type=Path, dir_okay=False), help="Write the budget YAML here.")
@handle_errors
def estimate(budget_file: Path | None, pilot: str | None, config_path: Path | None, **options: object) -> None:
    from pipelines.plans.estimate import estimate as estimate_budget
    from pipelines.plans.estimate_text import format_estimate
    from pipelines.plans.files import load_budget

    if (budget_file is None) == (pilot is None):
        raise UsageProblem("give exactly one of BUDGET_FILE or --from-run PILOT")
    if pilot is None:
        given = [f"--{name.replace('_', '-')}" for name, value in options.items() if value is not None]
        if given or config_path is not None:
            raise UsageProblem(f"{', '.join(given or ['--config'])}: only with --from-run PILOT")
        budget = load_budget(budget_file)
        click.echo(format_estimate(budget, estimate_budget(budget)))
        return
    scaled = _scaled_estimate(pilot, config_path, options)
    out = options["out"]
    if out is None:
        click.echo(scaled.yaml_text(), nl=False)
        return
    out.write_text(scaled.yaml_text(), encoding="utf-8")
    click.echo(scaled.text())
    click.echo(f"budget written: {out}")


def _scaled_estimate(pilot: str, config_path: Path | None, options: dict[str, object]) -> ScaledEstimate:
    """`runledger estimate --from-run`: the pilot's budget and measures, scaled to the options."""
    from datetime import UTC, datetime

    from pipelines.budgets.pilot import Target, pilot_budget, read_pilot, scale_pilot
    from pipelines.plans.files import load_budgets_with_files
    from pipelines.warehouse.connection import connect_read_only

    config = load_config(config_path)
    budgets = load_budgets_with_files(config.budgets_path) if config.budgets_path else []
    if not config.lake.exists():
        raise UsageProblem(f"{config.lake.describe()} does not exist yet: run `runledger run` first")
    conn = connect_read_only(config.lake)
    try:
        measures = read_pilot(conn, pilot)
    finally:
        conn.close()
    start = options["start"]
    target = Target(
        training_run=options["training_run"] or f"{pilot}-scaled",
        start=start.date() if start is not None else datetime.now(UTC).date(),
        **{name: options[name] for name in _SCALING_OPTIONS},
    )
    return scale_pilot(pilot_budget(budgets, pilot, config.budgets_path), measures, target)
