"""The bench: for each size, in a work folder of its own beside the cached data set, the nightly
job end to end on a fresh lake, again with nothing new, the six analyst questions, a night with
ten revised budgets, a night after the last month is re-delivered; the yardstick DuckDB pass over
the same files into a lake of its own; focus-converter; each in its own measured process tree.
Once per bench run, the CLI's start-up on the demo project (`cli_startup`). Results printed as a
table with every target beside its figure and written as JSON."""

from __future__ import annotations

import json
import os
import platform
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from unittest.mock import patch

import duckdb
import yaml

from bench.generate import RUNS, BenchDataSet, Redelivery, data_set, redelivery, size_label
from bench.measure import Measurement, run_measured
from bench.parallel import LOAD_STEP_PREFIX
from bench.questions import QuestionFailed, ask_plain_duckdb, ask_questions
from bench.sqlfiles import read_bench_sql
from pipelines.config import load_config
from pipelines.reports.writer import REPORT_STEM
from pipelines.warehouse.connection import connect_read_only
from pipelines.warehouse.lake import Lake
from tests.support import postgres

REPO_ROOT = Path(__file__).resolve().parent.parent
DAGSTER_YAML = REPO_ROOT / "pipelines" / "orchestration" / "dagster.yaml"
REPORT_HTML = f"{REPORT_STEM}.html"
CONVERTER = REPO_ROOT / ".venv-focus-converter" / "bin" / "focus-converter"
RUNLEDGER = Path(sys.executable).with_name("runledger")
# What the CLI's start-up is measured against: a bare Python process that imports DuckDB and runs
# one statement.
BARE_DUCKDB = (sys.executable, "-c", "import duckdb; duckdb.sql('select 1').fetchall()")
# The demo's budgeted pre-training run, whose report `report --run` finds up to date.
CLI_REPORT_RUN = "llm-7b-pt-r1"
# Each command a user types in the demo's folder (its runledger.yaml found there), with the exit
# code it must end with: the bare DuckDB process first, every ratio is to it.
CLI_COMMANDS = {
    "bare": (BARE_DUCKDB, 0),
    "help": ((str(RUNLEDGER), "--help"), 0),
    "usage": ((str(RUNLEDGER), "run", "--period", "2026-13"), 2),
    "config": ((str(RUNLEDGER), "check", "--config", "missing.yaml"), 2),
    "check": ((str(RUNLEDGER), "check"), 0),
    "query": ((str(RUNLEDGER), "query", "select * from run_costs"), 0),
    "report": ((str(RUNLEDGER), "report", "--run", CLI_REPORT_RUN), 0),
}
CLI_REPEATS = 3
# Pipeline stages in the order they run; a step key not listed is reported under its own name.
STAGES = {
    "run_registry": "setup",
    "budget_baselines": "setup",
    "resource_tag_snapshots": "setup",
    "run_events": "setup",
    "cluster_usage": "setup",
    "gpu_utilization": "setup",
    "focus_line_items": "focus_line_items",
    "cost_allocations": "cost_allocations",
    "run_costs": "run_costs",
    "unattributed_costs": "views",
    "reconciliation": "views",
    "cluster_utilization": "views",
    "run_cluster_share": "views",
    "run_utilization": "views",
    "run_costs_fully_loaded": "views",
    "budget_variance": "budget_variance",
    "group_budget_variance": "budget_variance",
    "budget_alerts": "budget_variance",
    "alert_deliveries": "budget_variance",
    "waste": "waste",
    "post_mortem_reports": "reports",
}
STAGE_ORDER = (
    "setup",
    "ingest",
    "focus_line_items",
    "cost_allocations",
    "run_costs",
    "views",
    "commitment_utilization",
    "run_progress",
    "budget_variance",
    "provisional_spend",
    "waste",
    "variance_causes",
    "recommendations",
    "reports",
)
GIB = 2**30
# The multiprocess variant has been measured up to this size only (each of its processes may fill
# DuckDB's memory limit: 4.69 GiB for two at 5M).
MULTIPROCESS_MAX_ROWS = 5_000_000
# The multiprocess variant runs with this many processes at most, then with one.
PROCESSES = 2


class BenchFailed(RuntimeError):
    """A measured child process failed; the message carries its output's tail."""


@dataclass(frozen=True)
class BenchOptions:
    """What one `make bench` measures.

    Attributes:
        sizes: line items per data set.
        cache_dir: where generated data sets are kept between runs (only read once generated).
        work_dir: where each size's lakes, reports and changed inputs go (replaced every run).
        results_dir: where the JSON result goes.
        converter: also run focus-converter (when its venv exists).
        multiprocess: also run the nightly job with the multiprocess executor.
        cli: also measure the CLI's start-up on the demo (`cli_startup`).
        timeout_seconds: longest any one measured process may run.
        runs: training runs in each data set.
    """

    sizes: tuple[int, ...]
    cache_dir: Path
    work_dir: Path
    results_dir: Path
    converter: bool = True
    multiprocess: bool = False
    cli: bool = True
    timeout_seconds: float = 7200
    runs: int = RUNS


def _load() -> list[float]:
    return [round(value, 2) for value in os.getloadavg()]


def _python(*arguments: str) -> list[str]:
    return [sys.executable, "-m", "bench", *arguments]


def _checked(measurement: Measurement, what: str) -> Measurement:
    if measurement.returncode != 0:
        raise BenchFailed(f"{what} failed (exit {measurement.returncode}):\n{measurement.output[-4000:]}")
    return measurement


def _fresh_dagster_home(folder: Path) -> Path:
    """An empty Dagster instance with the repo's dagster.yaml (warehouse pool, no telemetry), as
    `make dev` and cron runs use."""
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    shutil.copy(DAGSTER_YAML, folder / "dagster.yaml")
    return folder


def _stage_of(step_key: str) -> str:
    return "ingest" if step_key.startswith(("raw__", LOAD_STEP_PREFIX)) else STAGES.get(step_key, step_key)


def _ingest_span(stats: dict) -> float | None:
    """Seconds from the first load's start to the last one's end (steps that ran at once count
    once): the multiprocess job's load steps, else the nightly job's raw assets."""
    steps = [step for step in stats["steps"] if _stage_of(step["step"]) == "ingest" and step["end"] is not None]
    loads = [step for step in steps if step["step"].startswith(LOAD_STEP_PREFIX)]
    steps = loads or steps
    return round(max(s["end"] for s in steps) - min(s["start"] for s in steps), 3) if steps else None


def _stages(measurement: Measurement, stats: dict, rows: int) -> list[dict]:
    """Per stage: seconds summed over its steps (all partitions), rows/s of the data set's line
    items, and the process tree's peak RSS while one of its steps ran."""
    by_stage: dict[str, list[dict]] = {}
    for step in stats["steps"]:
        if step["start"] is not None and step["end"] is not None:
            by_stage.setdefault(_stage_of(step["step"]), []).append(step)
    order = [*STAGE_ORDER, *sorted(set(by_stage) - set(STAGE_ORDER))]
    stages = []
    for stage in order:
        steps = by_stage.get(stage, [])
        if not steps:
            continue
        seconds = sum(step["end"] - step["start"] for step in steps)
        peak = max(measurement.peak_between(step["start"], step["end"]) for step in steps)
        stages.append(
            {
                "stage": stage,
                "seconds": round(seconds, 3),
                "rows_per_second": round(rows / seconds) if seconds else None,
                "peak_rss_bytes": peak,
            }
        )
    return stages


def _warehouse_totals(lake: Lake) -> dict:
    conn = connect_read_only(lake)
    try:
        cursor = conn.execute(read_bench_sql("warehouse_totals"))
        row = cursor.fetchone()
        return {
            column[0]: (str(value) if not isinstance(value, int) else value)
            for column, value in zip(cursor.description, row)
        }
    finally:
        conn.close()


@dataclass(frozen=True)
class WorkFolder:
    """A size's work folder: the data set's export mirrored (hard links), its registry, budgets
    and configuration copied, so that the bench can change them (revise budgets, re-deliver a
    month) and the cached data set is only ever read.

    Attributes:
        root: `<work_dir>/<size>/`.
        config_path: `root/runledger.yaml` (lake in `root/run/lake/`, reports in `root/run/reports/`).
    """

    root: Path
    config_path: Path

    @property
    def export_root(self) -> Path:
        return self.root / "export"

    @property
    def budgets_dir(self) -> Path:
        return self.root / "budgets"

    @property
    def reports_dir(self) -> Path:
        return self.root / "run" / "reports"


def _mirror(source: Path, target: Path) -> None:
    """`source`'s tree at `target`: folders made, files hard-linked (copied across file systems)."""

    def link(from_path: str, to_path: str) -> None:
        try:
            os.link(from_path, to_path)
        except OSError:
            shutil.copy2(from_path, to_path)

    shutil.copytree(source, target, copy_function=link)


def work_folder(dataset: BenchDataSet, work_dir: Path) -> WorkFolder:
    """A fresh work folder for the data set (an earlier one of the same size is removed)."""
    root = (work_dir / f"{size_label(dataset.rows)}-{dataset.runs}runs").resolve()
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    _mirror(dataset.export_root, root / "export")
    shutil.copytree(dataset.root / "budgets", root / "budgets")
    shutil.copy(dataset.root / "runs.yaml", root / "runs.yaml")
    shutil.copy(dataset.config_path, root / "runledger.yaml")
    return WorkFolder(root=root, config_path=root / "runledger.yaml")


def _nightly(
    work: WorkFolder,
    rows: int,
    label: str,
    options: BenchOptions,
    *,
    config_path: Path | None = None,
    processes: int | None = None,
    arguments: tuple[str, ...] = (),
) -> dict:
    """One measured `runledger run` on the work folder's lake as it stands (or the multiprocess
    job on `processes` processes, on the lake `config_path` names); rows/s of `rows` line items.
    `arguments` are more options of `python -m bench nightly` (DuckDB's limits, `--loads-only`)."""
    home = _fresh_dagster_home(work.root / "dagster" / label)
    stats_path = home / "steps.json"
    command = ["nightly", "--config", str(config_path or work.config_path), "--stats", str(stats_path)]
    if processes:
        command.extend(["--processes", str(processes)])
    command.extend(arguments)
    load_before = _load()
    measurement = _checked(
        run_measured(_python(*command), env={"DAGSTER_HOME": str(home)}, timeout_seconds=options.timeout_seconds),
        f"nightly job ({label}) on {size_label(rows)}",
    )
    stats = json.loads(stats_path.read_text())
    return {
        "wall_seconds": round(measurement.wall_seconds, 3),
        "job_seconds": round(stats["end"] - stats["start"], 3),
        "rows_per_second": round(rows / measurement.wall_seconds),
        "peak_rss_bytes": measurement.peak_rss_bytes,
        "stages": _stages(measurement, stats, rows),
        "ingest_wall_seconds": _ingest_span(stats),
        "load_average": {"before": load_before, "after": _load()},
    }


def _yardstick(files: tuple[Path, ...], rows: int, lake_folder: Path, options: BenchOptions) -> dict:
    """The yardstick pass over `files` into a new embedded lake (SQLite catalog, Parquet data
    files), the storage the nightly job writes."""
    load_before = _load()
    measurement = _checked(
        run_measured(
            _python("yardstick", "--lake", str(lake_folder), *map(str, files)),
            timeout_seconds=options.timeout_seconds,
        ),
        f"yardstick on {size_label(rows)}",
    )
    written = json.loads(measurement.output.strip().splitlines()[-1])
    shutil.rmtree(lake_folder, ignore_errors=True)
    return {
        "rows": written["rows"],
        "statement_seconds": written["seconds"],
        "wall_seconds": round(measurement.wall_seconds, 3),
        "rows_per_second": round(rows / measurement.wall_seconds),
        "peak_rss_bytes": measurement.peak_rss_bytes,
        "load_average": {"before": load_before, "after": _load()},
    }


def _converter(dataset: BenchDataSet, work: WorkFolder, options: BenchOptions) -> dict | None:
    """focus-converter 1.0.0 (its own venv) on the export's data folder, or None without it."""
    if not options.converter or not CONVERTER.is_file():
        return None
    output = work.root / "converter-output"
    shutil.rmtree(output, ignore_errors=True)
    output.mkdir()
    load_before = _load()
    measurement = run_measured(
        [
            "timeout",
            str(int(options.timeout_seconds)),
            str(CONVERTER),
            "convert",
            "--provider",
            "aws",
            "--data-format",
            "parquet",
            "--parquet-data-format",
            "dataset",
            "--data-path",
            str(dataset.export_root / "data"),
            "--export-path",
            str(output),
        ],
        timeout_seconds=options.timeout_seconds + 30,
    )
    written = sum(path.stat().st_size for path in output.rglob("*.parquet"))
    shutil.rmtree(output, ignore_errors=True)
    return {
        "returncode": measurement.returncode,
        "wall_seconds": round(measurement.wall_seconds, 3),
        "rows_per_second": round(dataset.rows / measurement.wall_seconds),
        "peak_rss_bytes": measurement.peak_rss_bytes,
        "written_bytes": written,
        "load_average": {"before": load_before, "after": _load()},
    }


def _report_times(reports_dir: Path) -> dict[str, int]:
    """Each run report's modification time (ns), by run folder."""
    return {path.parent.name: path.stat().st_mtime_ns for path in reports_dir.glob(f"*/{REPORT_HTML}")}


def revise_budgets(budgets_dir: Path) -> list[str]:
    """Raises every budget's GPU-hour price by a tenth (the planners revised their estimates);
    returns the runs revised."""
    revised = []
    for path in sorted(budgets_dir.glob("*.yaml")):
        budget = yaml.safe_load(path.read_text())
        budget["model"]["gpu_hour_price"] = round(budget["model"]["gpu_hour_price"] * 1.1, 2)
        path.write_text(yaml.safe_dump(budget, sort_keys=False))
        revised.append(budget["training_run"])
    return revised


def _revised_budgets_night(work: WorkFolder, rows: int, options: BenchOptions) -> dict:
    """The nightly job after the budgets were revised: which run reports it wrote again."""
    before = _report_times(work.reports_dir)
    revised = revise_budgets(work.budgets_dir)
    measured = _nightly(work, rows, "revised-budgets", options)
    after = _report_times(work.reports_dir)
    rewritten = sorted(run for run, written in after.items() if before.get(run) != written)
    return {**measured, "revised_runs": revised, "reports": len(after), "rewritten_reports": rewritten}


def redeliver(dataset: BenchDataSet, work: WorkFolder) -> Redelivery:
    """Replaces the work folder's last billing period with its re-delivery (a new execution and
    manifest, other data files) and returns it."""
    delivered = redelivery(dataset)
    partition = f"BILLING_PERIOD={dataset.last_period:%Y-%m}"
    for folder in ("data", "metadata"):
        shutil.rmtree(work.export_root / folder / partition)
        _mirror(delivered.export_root / folder / partition, work.export_root / folder / partition)
    return delivered


def bench_size(rows: int, options: BenchOptions, echo=print) -> dict:
    """Every measurement of one size: generation (or the cache), the full nightly run, a re-run
    with nothing new, the questions, a night of revised budgets, a night after a re-delivered
    month, the yardstick over all files and over the re-delivered month, focus-converter and
    (when asked for) the multiprocess run."""
    label = size_label(rows)
    started = time.time()
    dataset = data_set(options.cache_dir, rows, options.runs)
    generation_seconds = time.time() - started
    echo(f"{label}: data set ready in {generation_seconds:,.1f} s ({dataset.root})")
    work = work_folder(dataset, options.work_dir)
    full = _nightly(work, rows, "full", options)
    full["reports"] = len(_report_times(work.reports_dir))
    totals = _warehouse_totals(load_config(work.config_path).lake)
    echo(f"{label}: nightly job {full['wall_seconds']:,.1f} s, peak {full['peak_rss_bytes'] / GIB:,.2f} GiB")
    rerun = _nightly(work, rows, "rerun", options)
    echo(f"{label}: re-run with nothing new {rerun['wall_seconds']:,.1f} s")
    try:
        questions = ask_questions(work.config_path, options.timeout_seconds)
        plain = ask_plain_duckdb(dataset.data_files, options.timeout_seconds)
    except QuestionFailed as error:
        raise BenchFailed(str(error)) from None
    slowest = max(answer["median_seconds"] for answer in questions.values())
    echo(f"{label}: six questions, slowest {slowest:.2f} s (plain DuckDB {plain['median_seconds']:.2f} s)")
    revised = _revised_budgets_night(work, rows, options)
    echo(
        f"{label}: {len(revised['revised_runs'])} budgets revised: {len(revised['rewritten_reports'])} of "
        f"{revised['reports']} run reports written again, {revised['wall_seconds']:,.1f} s"
    )
    delivered = redeliver(dataset, work)
    redelivered_files, redelivered_rows = delivered.data_files, delivered.rows
    redelivered = _nightly(work, redelivered_rows, "redelivered", options)
    redelivered_totals = _warehouse_totals(load_config(work.config_path).lake)
    echo(f"{label}: re-delivered {size_label(redelivered_rows)}-line month {redelivered['wall_seconds']:,.1f} s")
    result = {
        "size": label,
        "rows": rows,
        "runs": options.runs,
        "generation_seconds": round(generation_seconds, 3),
        "nightly": full,
        "warehouse": totals,
        "rerun": rerun,
        "questions": questions,
        "plain_duckdb": plain,
        "revised_budgets": revised,
        "redelivered": {**redelivered, "rows": redelivered_rows, "warehouse": redelivered_totals},
        "yardstick": _yardstick(dataset.data_files, rows, work.root / "yardstick" / "lake", options),
        "yardstick_redelivered": _yardstick(
            redelivered_files, redelivered_rows, work.root / "yardstick" / "lake", options
        ),
    }
    echo(
        f"{label}: yardstick {result['yardstick']['wall_seconds']:,.1f} s, over the re-delivered month "
        f"{result['yardstick_redelivered']['wall_seconds']:,.1f} s"
    )
    result["converter"] = _converter(dataset, work, options)
    if result["converter"]:
        echo(f"{label}: focus-converter {result['converter']['wall_seconds']:,.1f} s")
    if options.multiprocess and rows > MULTIPROCESS_MAX_ROWS:
        echo(f"{label}: multiprocess run skipped: it is measured up to {size_label(MULTIPROCESS_MAX_ROWS)} line items")
    elif options.multiprocess and not postgres.installed():
        echo(f"{label}: multiprocess run skipped: it needs PostgreSQL's server (Debian's postgresql)")
    elif options.multiprocess:
        result["multiprocess"] = _multiprocess(work, rows, redelivered_totals, options, echo)
    return result


def _team_config(work: WorkFolder, server: postgres.PostgresServer, dbname: str, folder: str) -> Path:
    """The data set's configuration with the team setup's lake: catalog in PostgreSQL, data files
    in `run/<folder>/`."""
    config = yaml.safe_load(work.config_path.read_text())
    config["warehouse"] = {
        "catalog": {"postgres": {"host": server.host, "port": server.port, "dbname": dbname}},
        "data_path": f"run/{folder}/data",
    }
    config["reports_dir"] = f"run/{folder}/reports"
    path = work.root / f"runledger-{folder}.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


def _multiprocess(work: WorkFolder, rows: int, totals: dict, options: BenchOptions, echo=print) -> dict:
    """The multiprocess job on the work folder's inputs as they stand, into a lake with a
    PostgreSQL catalog (a local cluster the bench starts and stops), with one process and with
    PROCESSES; each lake must hold `totals`, what the nightly job's embedded lake holds."""
    result = {}
    # libpq's user for the catalog, in this process and the measured ones (they inherit it)
    with postgres.local_cluster() as server, patch.dict(os.environ, {"PGUSER": server.user}):
        for processes in (1, PROCESSES):
            folder = f"team-{processes}"
            dbname = postgres.new_database(server, f"bench_{processes}")
            config_path = _team_config(work, server, dbname, folder)
            label = f"{processes} process" + ("es" if processes > 1 else "")
            measured = _nightly(work, rows, folder, options, config_path=config_path, processes=processes)
            lake_totals = _warehouse_totals(load_config(config_path).lake)
            if lake_totals != totals:
                raise BenchFailed(f"the multiprocess job ({label}) wrote {lake_totals}, the nightly job {totals}")
            result[folder] = measured
            echo(
                f"{size_label(rows)}: multiprocess nightly job, {label}: {measured['wall_seconds']:,.1f} s "
                f"(ingest {measured['ingest_wall_seconds']:,.1f} s)"
            )
    one, many = result["team-1"], result[f"team-{PROCESSES}"]
    result["speed_up"] = round(one["wall_seconds"] / many["wall_seconds"], 3)
    result["ingest_speed_up"] = round(one["ingest_wall_seconds"] / many["ingest_wall_seconds"], 3)
    return result


def _commit() -> str:
    completed = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=REPO_ROOT, capture_output=True, text=True, check=False
    )
    return completed.stdout.strip() or "unknown"


def machine() -> dict:
    """The machine the figures were taken on."""
    return {
        "cpus": os.cpu_count(),
        "memory_bytes": os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "duckdb": duckdb.__version__,
    }


def _bench_size_or_failure(rows: int, options: BenchOptions, echo=print) -> dict:
    """A size's results, or the failure of one of its measurements: the sizes before and after it
    are still measured and written (a 5M run out of memory must not lose the 1M figures)."""
    try:
        return bench_size(rows, options, echo)
    except BenchFailed as error:
        echo(f"{size_label(rows)}: {str(error).splitlines()[0]}")
        return {"size": size_label(rows), "rows": rows, "runs": options.runs, "failed": str(error)}


def _demo_environment() -> dict[str, str]:
    """This environment without a configuration or Dagster instance of its own: a command finds
    the demo's runledger.yaml in its folder, and the demo's night records into a temporary instance."""
    return {name: value for name, value in os.environ.items() if name not in ("RUNLEDGER_CONFIG", "DAGSTER_HOME")}


def _shown(command: tuple[str, ...]) -> str:
    return " ".join((Path(command[0]).name, *command[1:]))


def cli_startup(demo_dir: Path, echo=print) -> dict:
    """The CLI's start-up as a user meets it on the demo project in `demo_dir` (after its first
    night): the wall seconds of each of `CLI_COMMANDS`, run `CLI_REPEATS` times in turn (a load
    that changes meanwhile weighs on every command alike), and their medians.

    Raises:
        BenchFailed: a command ended with another exit code than its own.
    """
    environment = _demo_environment()
    # the run's report up to date for this very request, as a second `report --run` finds it
    subprocess.run(CLI_COMMANDS["report"][0], cwd=demo_dir, env=environment, capture_output=True, check=False)
    load_before = _load()
    seconds: dict[str, list[float]] = {name: [] for name in CLI_COMMANDS}
    for _ in range(CLI_REPEATS):
        for name, (command, exit_code) in CLI_COMMANDS.items():
            start = time.perf_counter()
            done = subprocess.run(command, cwd=demo_dir, env=environment, capture_output=True, check=False)
            seconds[name].append(round(time.perf_counter() - start, 4))
            if done.returncode != exit_code:
                output = done.stderr.decode()[-2000:]
                raise BenchFailed(f"{_shown(command)} exited {done.returncode}, not {exit_code}:\n{output}")
    commands = {
        name: {
            "command": _shown(command),
            "seconds": sorted(times),
            "median_seconds": sorted(times)[len(times) // 2],
        }
        for (name, (command, _)), times in zip(CLI_COMMANDS.items(), seconds.values(), strict=True)
    }
    echo(
        "CLI on the demo: "
        + ", ".join(f"{name} {command['median_seconds']:.2f} s" for name, command in commands.items())
    )
    return {"load_average": {"before": load_before, "after": _load()}, "commands": commands}


def _cli_on_the_demo(options: BenchOptions, echo=print) -> dict:
    """`runledger demo` into the work folder, then `cli_startup` on it; a failure is recorded
    (`failed`), the sizes' figures are kept."""
    demo_dir = options.work_dir / "cli-demo"
    shutil.rmtree(demo_dir, ignore_errors=True)
    done = subprocess.run(
        [str(RUNLEDGER), "demo", "--dir", str(demo_dir)], env=_demo_environment(), capture_output=True, check=False
    )
    try:
        if done.returncode != 0:
            raise BenchFailed(f"runledger demo failed (exit {done.returncode}):\n{done.stderr.decode()[-2000:]}")
        return cli_startup(demo_dir, echo)
    except BenchFailed as error:
        echo(f"CLI: {str(error).splitlines()[0]}")
        return {"failed": str(error)}


def run_bench(options: BenchOptions, echo=print) -> tuple[dict, Path]:
    """Benches every size; returns the results and the JSON file they were written to. A size
    whose measurement failed is recorded with `failed` (the error and the output's tail)."""
    started = datetime.now(UTC)
    commit = _commit()
    results = {
        "started_at": started.isoformat(timespec="seconds"),
        "commit": commit,
        "machine": machine(),
        "sizes": [_bench_size_or_failure(rows, options, echo) for rows in options.sizes],
    }
    if options.cli:
        results["cli"] = _cli_on_the_demo(options, echo)
    results["total_seconds"] = round((datetime.now(UTC) - started).total_seconds(), 1)
    options.results_dir.mkdir(parents=True, exist_ok=True)
    path = options.results_dir / f"{started:%Y-%m-%dT%H%M}-{commit}.json"
    path.write_text(json.dumps(results, indent=2) + "\n")
    return results, path
