"""`runledger`: the command line. Exit 0 ok, 1 run failed, 2 usage or config error.

One module per group of commands: nightly (demo, run, repair), warehouse (query, export, report,
migrate), estimate, check; common holds the exit codes and the shared options, output the
printing."""

from __future__ import annotations

import click

from pipelines.cli.check import check
from pipelines.cli.estimate import estimate
from pipelines.cli.nightly import demo, repair, run
from pipelines.cli.warehouse import export, migrate, query, report


@click.group(
    help="RunLedger: cloud bills to per-training-run cost accounts.",
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.version_option(package_name="runledger", message="runledger %(version)s", help="Print the version and exit.")
def main() -> None:
    """The `runledger` command group."""


for command in (demo, run, repair, query, export, report, migrate, estimate, check):
    main.add_command(command)
