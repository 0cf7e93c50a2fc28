"""`runledger check`: the configuration, its files and its sources validated without running."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import click

from pipelines.cli.common import (
    RUN_FAILED,
    USAGE_ERROR,
    config_option,
    echo_err,
    handle_errors,
    is_usage_error,
    load_config,
)

T = TypeVar("T")


@click.command(
    help=(
        "Validate the config, budgets, run registry, mapping, run event and manual cost files, and list each "
        "billing source (an S3 prefix, a BigQuery table, a folder), without running; every problem is reported."
    )
)
@config_option
@handle_errors
def check(config_path: Path | None) -> None:
    config = load_config(config_path)  # without it nothing else can be checked: its error alone, exit 2

    from connectors.training.event_files import read_event_files
    from pipelines.attribution.overlaps import contradictions, registry_overlaps, registry_resources
    from pipelines.attribution.registry import load_registry
    from pipelines.budgets.tables import known_scope_values, run_currencies
    from pipelines.ingest.readers import reader_for
    from pipelines.plans.files import (
        BudgetFolder,
        read_budget_folder,
        require_budget_currencies,
        require_existing_runs,
        require_existing_scopes,
        require_scope_dimensions,
    )
    from pipelines.plans.schema import SCOPE_KINDS
    from pipelines.sources.manual_costs.settings import ManualCostsSource
    from pipelines.sources.mappings import read_category_rules
    from pipelines.warehouse.connection import connect_read_only

    problems: list[tuple[str, bool]] = []  # (message, whether the configuration is at fault)

    def attempt(step: Callable[[], T], default: T, source: str | None = None) -> T:
        """The step's result, or `default` with its error kept among the problems."""
        try:
            return step()
        except Exception as error:  # noqa: BLE001 - every problem is reported, none stops the check
            problems.append((f"source {source}: {error}" if source else str(error), is_usage_error(error)))
            return default

    runs = attempt(lambda: load_registry(config.runs_path) if config.runs_path else [], [])
    folder = attempt(
        lambda: read_budget_folder(config.budgets_path) if config.budgets_path else BudgetFolder([], []),
        BudgetFolder([], []),
    )
    budgets = folder.runs
    attempt(lambda: require_scope_dimensions(folder.groups, config.attribution.custom_dimensions), None)
    rules = attempt(lambda: read_category_rules(config.cost_categories_path), [])
    periods: dict[str, str] = {}
    manual_lines = 0
    for source in config.billing_sources:
        reader = attempt(lambda source=source: reader_for(source, config), None, source.name)
        found = attempt(reader.billing_periods, None, source.name) if reader is not None else None
        if found is not None:
            periods[source.name] = ", ".join(f"{period:%Y-%m}" for period in found) or "none yet"
        if isinstance(source, ManualCostsSource) and found is not None:
            manual_lines += reader.line_count
    run_events = sum(
        attempt(lambda s=s: len(read_event_files(config.resolve(s.path))), 0, s.name)
        for s in config.run_events_sources
        if s.path
    )
    billed, matched, scope_values = None, {}, None
    if config.lake.exists() and not config.lake.legacy_file:
        conn = attempt(lambda: connect_read_only(config.lake), None)
        if conn is not None:
            try:
                billed = attempt(lambda: run_currencies(conn), None)
                matched = attempt(lambda: registry_resources(conn, runs), {})
                scope_values = attempt(lambda: known_scope_values(conn), None)
            finally:
                conn.close()
    if scope_values is not None:  # before the first night no spend says which values exist
        known = {
            kind: set(scope_values.get(kind, ())) for kind in (*SCOPE_KINDS, *config.attribution.custom_dimensions)
        }
        for run in runs:
            for kind in ("experiment", "owner", "dataset_version"):
                if getattr(run, kind):
                    known[kind].add(getattr(run, kind))
        attempt(
            lambda: require_existing_scopes(
                folder.groups, known, where=f"the spend of {config.lake.describe()} or the run registry"
            ),
            None,
        )
    attempt(
        lambda: require_existing_runs(
            budgets,
            {run.id for run in runs},
            set(billed) if billed is not None else None,
            registry_file=config.runs_path,
            lake=config.lake.describe(),
        ),
        None,
    )
    attempt(lambda: require_budget_currencies(budgets, billed or {}), None)
    if problems:
        for message, _ in problems:
            echo_err(f"error: {message}")
        echo_err(f"check: {len(problems)} problem{'s' if len(problems) > 1 else ''} found, nothing was run")
        sys.exit(USAGE_ERROR if any(usage for _, usage in problems) else RUN_FAILED)
    click.echo(
        f"ok: {len(config.sources)} sources, {len(runs)} registered runs, {len(budgets)} budgets, "
        f"{len(folder.groups)} group budgets, "
        f"{len(rules)} cost category rules, {len(config.attribution.shared)} shared-cost rules, "
        f"{run_events} run events in files, {manual_lines} manual cost lines ({config.base_dir})"
    )
    for name, listed in periods.items():
        click.echo(f"source {name}: billing periods {listed}")
    overlaps = [overlap.describe() for overlap in registry_overlaps(runs, matched)]
    for finding in overlaps + contradictions(runs, config.attribution.shared):
        click.echo(f"registry {finding}")
    if config.lake.legacy_file:
        click.echo(
            f"warning: {config.lake.legacy_file} is a warehouse file of an earlier RunLedger (budgets were not checked "
            "against its spend): convert it once with `runledger migrate`"
        )
