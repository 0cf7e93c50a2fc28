"""`runledger check`: the configuration and its files validated without running."""

from __future__ import annotations

from pathlib import Path

import click

from pipelines.cli.common import config_option, handle_errors


@click.command(help="Validate the config, budgets, run registry, mapping and run event files without running.")
@config_option
@handle_errors
def check(config_path: Path | None) -> None:
    from connectors.training.event_files import read_event_files
    from pipelines.attribution.overlaps import contradictions, registry_overlaps
    from pipelines.attribution.registry import load_registry
    from pipelines.budgets.tables import attributed_runs
    from pipelines.config import load_config
    from pipelines.ingest.readers import reader_for
    from pipelines.plans.files import load_budgets_with_files, require_existing_runs
    from pipelines.sources.manual_costs.reader import ManualCostsReader
    from pipelines.sources.mappings import read_category_rules
    from pipelines.warehouse.connection import connect_read_only

    config = load_config(config_path)
    runs = load_registry(config.runs_path) if config.runs_path else []
    budgets = load_budgets_with_files(config.budgets_path) if config.budgets_path else []
    rules = read_category_rules(config.cost_categories_path)
    readers = [reader_for(source, config) for source in config.billing_sources]
    manual_lines = sum(reader.line_count for reader in readers if isinstance(reader, ManualCostsReader))
    run_events = sum(len(read_event_files(config.resolve(s.path))) for s in config.run_events_sources if s.path)
    attributed = None
    if budgets and config.lake.exists() and not config.lake.legacy_file:
        conn = connect_read_only(config.lake)
        try:
            attributed = attributed_runs(conn)
        finally:
            conn.close()
    require_existing_runs(
        budgets,
        {run.id for run in runs},
        attributed,
        registry_file=config.runs_path,
        lake=config.lake.describe(),
    )
    click.echo(
        f"ok: {len(config.sources)} sources, {len(runs)} registered runs, {len(budgets)} budgets, "
        f"{len(rules)} cost category rules, {len(config.attribution.shared)} shared-cost rules, "
        f"{run_events} run events in files, {manual_lines} manual cost lines ({config.base_dir})"
    )
    for finding in [o.describe() for o in registry_overlaps(runs)] + contradictions(runs, config.attribution.shared):
        click.echo(f"registry {finding}")
    if config.lake.legacy_file:
        click.echo(
            f"warning: {config.lake.legacy_file} is a warehouse file of an earlier RunLedger (budgets were not checked "
            "against its spend): convert it once with `runledger migrate`"
        )
