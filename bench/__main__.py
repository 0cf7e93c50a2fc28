"""`python -m bench`: the command line of `make bench`."""

from __future__ import annotations

from pathlib import Path

import click

from bench.generate import RUNS, parse_size

DEFAULT_SIZES = "1M,5M,20M"


def _sizes(_context: click.Context, _parameter: click.Parameter, value: str) -> tuple[int, ...]:
    try:
        return tuple(parse_size(part) for part in value.split(",") if part.strip())
    except ValueError as error:
        raise click.BadParameter(str(error)) from None


@click.group()
def main() -> None:
    """RunLedger's benchmark: the nightly job on synthetic CUR 2.0 exports, measured."""


@main.command("run")
@click.option(
    "--sizes",
    default=DEFAULT_SIZES,
    show_default=True,
    callback=_sizes,
    help="Comma-separated line-item counts (10k, 1M, 20M …), each split over two billing periods.",
)
@click.option(
    "--cache-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path(".bench-data"),
    show_default=True,
    help="Where generated data sets are kept and reused (keyed by size and generator version); only read "
    "once generated.",
)
@click.option(
    "--work-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path(".bench-work"),
    show_default=True,
    help="Where each size's lakes, reports, revised budgets and re-delivered month go (replaced every run).",
)
@click.option(
    "--results-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("bench/results"),
    show_default=True,
    help="Where the JSON result file is written.",
)
@click.option(
    "--converter/--no-converter",
    default=True,
    show_default=True,
    help="Also time focus-converter 1.0.0 (needs .venv-focus-converter; `make bench` creates it).",
)
@click.option(
    "--multiprocess/--no-multiprocess",
    default=False,
    show_default=True,
    help="Also run the nightly job with Dagster's multiprocess executor into a lake with a PostgreSQL catalog "
    "(a local throwaway cluster), one process and then two, one per billing period (sizes up to 5M).",
)
@click.option(
    "--cli/--no-cli",
    default=True,
    show_default=True,
    help="Also time the CLI's start-up on the demo project (`runledger demo` into the work folder), once.",
)
@click.option(
    "--timeout",
    "timeout_seconds",
    type=float,
    default=7200,
    show_default=True,
    help="Seconds after which any one measured process is killed.",
)
@click.option(
    "--runs",
    type=click.IntRange(min=1),
    default=RUNS,
    show_default=True,
    help="Training runs in each data set (each gets a report; fewer make a quick smoke run).",
)
def run(
    sizes: tuple[int, ...],
    cache_dir: Path,
    work_dir: Path,
    results_dir: Path,
    converter: bool,
    multiprocess: bool,
    cli: bool,
    timeout_seconds: float,
    runs: int,
) -> None:
    """Generates (or reuses) the data sets, measures every size, prints the table, writes JSON."""
    from bench.harness import BenchOptions, run_bench
    from bench.report import format_results

    options = BenchOptions(
        sizes=sizes,
        cache_dir=cache_dir,
        work_dir=work_dir,
        results_dir=results_dir,
        converter=converter,
        multiprocess=multiprocess,
        cli=cli,
        timeout_seconds=timeout_seconds,
        runs=runs,
    )
    results, path = run_bench(options, echo=lambda line: click.echo(line))
    click.echo(format_results(results))
    click.echo(f"results: {path} (bench took {results['total_seconds']:,.0f} s)")
    failed = [size["size"] for size in results["sizes"] if "failed" in size]
    if "failed" in results.get("cli", {}):
        failed.append("the CLI on the demo")
    if failed:
        raise click.ClickException(f"the bench failed at {', '.join(failed)}: the error is in {path}")


@main.command("nightly")
@click.option(
    "--config",
    "config_path",
    required=True,
    type=click.Path(dir_okay=False, exists=True, path_type=Path),
    help="The data set's runledger.yaml.",
)
@click.option(
    "--stats",
    "stats_path",
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="Where the steps' start and end times are written (JSON).",
)
@click.option(
    "--processes",
    type=click.IntRange(min=1),
    help="Run the billing periods with Dagster's multiprocess executor, this many at once.",
)
@click.option("--memory-limit", help="DuckDB's memory limit in every process of the job (default: the product's).")
@click.option(
    "--threads", type=click.IntRange(min=1), help="DuckDB's threads in every process (default: one per core)."
)
@click.option("--loads-only", is_flag=True, help="With --processes: the load steps only, not the rest of the job.")
def nightly(
    config_path: Path,
    stats_path: Path,
    processes: int | None,
    memory_limit: str | None,
    threads: int | None,
    loads_only: bool,
) -> None:
    """Internal: the nightly job in this process, as the harness measures it ($DAGSTER_HOME set)."""
    from bench.child import run_nightly_job
    from bench.parallel import DuckDBLimits

    if loads_only and not processes:
        raise click.UsageError("--loads-only needs --processes")
    run_nightly_job(
        config_path, stats_path, processes=processes, limits=DuckDBLimits(memory_limit, threads), loads_only=loads_only
    )


def _size(_context: click.Context, _parameter: click.Parameter, value: str) -> int:
    try:
        return parse_size(value)
    except ValueError as error:
        raise click.BadParameter(str(error)) from None


def _limits(_context: click.Context, _parameter: click.Parameter, value: str) -> tuple[str, ...]:
    from bench.memory import parse_limits

    try:
        return parse_limits(value)
    except ValueError as error:
        raise click.BadParameter(str(error)) from None


def _data_options(function):
    """The options `memory` and `scale-out` share with `run`: the size, the cache and work folders,
    the runs per data set and the timeout."""
    for option in reversed(
        (
            click.option(
                "--size",
                default="5M",
                show_default=True,
                callback=_size,
                help="Line items (10k, 1M, 5M …), two periods.",
            ),
            click.option(
                "--cache-dir",
                type=click.Path(file_okay=False, path_type=Path),
                default=Path(".bench-data"),
                show_default=True,
                help="Where generated data sets are kept and reused (`run`'s cache).",
            ),
            click.option(
                "--work-dir",
                type=click.Path(file_okay=False, path_type=Path),
                default=Path(".bench-work"),
                show_default=True,
                help="Where the lakes go (the size's work folder is replaced).",
            ),
            click.option(
                "--runs",
                type=click.IntRange(min=1),
                default=RUNS,
                show_default=True,
                help="Training runs in the data set.",
            ),
            click.option(
                "--timeout",
                "timeout_seconds",
                type=float,
                default=7200,
                show_default=True,
                help="Seconds after which any one measured process is killed.",
            ),
        )
    ):
        function = option(function)
    return function


def _options(size: int, cache_dir: Path, work_dir: Path, runs: int, timeout_seconds: float):
    from bench.harness import BenchOptions

    return BenchOptions(
        sizes=(size,),
        cache_dir=cache_dir,
        work_dir=work_dir,
        results_dir=work_dir,
        converter=False,
        timeout_seconds=timeout_seconds,
        runs=runs,
    )


@main.command("memory")
@_data_options
@click.option(
    "--limits",
    default="2.5GiB,2GiB",
    show_default=True,
    callback=_limits,
    help="DuckDB memory limits, comma-separated; the first is the one the others are compared with.",
)
def memory(
    size: int, cache_dir: Path, work_dir: Path, runs: int, timeout_seconds: float, limits: tuple[str, ...]
) -> None:
    """The full nightly job on one cached data set at each memory limit: wall seconds, seconds and
    peak memory per stage, side by side."""
    import json

    from bench.harness import BenchFailed
    from bench.memory import format_memory_limits, measure_memory_limits

    options = _options(size, cache_dir, work_dir, runs, timeout_seconds)
    try:
        result = measure_memory_limits(size, limits, options, echo=click.echo)
    except BenchFailed as error:
        raise click.ClickException(str(error)) from None
    click.echo(format_memory_limits(result))
    click.echo(json.dumps(result))


@main.command("scale-out")
@_data_options
def scale_out(size: int, cache_dir: Path, work_dir: Path, runs: int, timeout_seconds: float) -> None:
    """One worker against two: both billing periods loaded into one PostgreSQL + S3 lake by one
    process, then by two at once, one DuckDB thread each; the speed-up, and each lake's totals
    checked against the raw export."""
    import json

    from bench.harness import BenchFailed
    from bench.scale_out import format_scale_out, measure_scale_out

    options = _options(size, cache_dir, work_dir, runs, timeout_seconds)
    try:
        result = measure_scale_out(size, options, echo=click.echo)
    except (BenchFailed, RuntimeError) as error:
        raise click.ClickException(str(error)) from None
    click.echo(format_scale_out(result))
    click.echo(json.dumps(result))


@main.command("yardstick")
@click.option(
    "--lake",
    "lake_folder",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="Folder of the embedded lake the pass writes (replaced).",
)
@click.argument("files", nargs=-1, required=True)
def yardstick(lake_folder: Path, files: tuple[str, ...]) -> None:
    """Internal: the bare DuckDB normalize pass over FILES into a new lake, as the harness measures it."""
    from bench.child import run_yardstick

    run_yardstick(list(files), lake_folder)


@main.command("plain-question")
@click.argument("files", nargs=-1, required=True)
def plain_question(files: tuple[str, ...]) -> None:
    """Internal: plain DuckDB answering spend by service and day over the raw export's FILES."""
    from bench.child import run_plain_question

    run_plain_question(list(files))


@main.command("table")
@click.argument("results_file", type=click.Path(dir_okay=False, exists=True, path_type=Path))
@click.option("--markdown", is_flag=True, help="The targets as a Markdown table, as docs/scaling.md quotes it.")
def table(results_file: Path, markdown: bool) -> None:
    """Prints the table of a bench run's JSON result file again."""
    import json

    from bench.report import format_results, format_targets_markdown

    results = json.loads(results_file.read_text())
    click.echo(format_targets_markdown(results) if markdown else format_results(results))


if __name__ == "__main__":
    main()
