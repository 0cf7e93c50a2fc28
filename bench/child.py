"""What the bench runs in a child process, so that each measurement has its own process tree:
the nightly job (in process or with the multiprocess executor), the yardstick pass and plain
DuckDB answering a question over the raw export."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path
from typing import TYPE_CHECKING

import dagster as dg
import duckdb

from bench.sqlfiles import read_bench_sql

if TYPE_CHECKING:
    from bench.parallel import DuckDBLimits


def _steps(instance: dg.DagsterInstance) -> list[dict]:
    """Start and end (epoch seconds) of every step of every run the instance recorded."""
    steps = []
    for run in instance.get_runs():
        for stats in instance.get_run_step_stats(run.run_id):
            steps.append(
                {
                    "step": stats.step_key,
                    "partition": run.tags.get("dagster/partition"),
                    "start": stats.start_time,
                    "end": stats.end_time,
                    "status": stats.status.value if stats.status else None,
                }
            )
    return steps


def run_nightly_job(
    config_path: Path,
    stats_path: Path,
    processes: int | None = None,
    limits: DuckDBLimits | None = None,
    loads_only: bool = False,
) -> None:
    """`runledger run` on `config_path` in this process, or with `processes` the job of
    `bench.parallel` on that many processes; the steps' times go to `stats_path`.

    `$DAGSTER_HOME` must name a fresh instance folder (the parent sets it), so that the steps
    can be read back from its event log.

    Args:
        config_path: the data set's runledger.yaml.
        stats_path: where the steps' start and end times are written (JSON).
        processes: run `bench.parallel`'s job with this many steps at once (None: the nightly job).
        limits: DuckDB's memory limit and threads in every process of the job.
        loads_only: with `processes`, only the load steps (`bench.parallel.parallel_loads`).
    """
    from bench.parallel import DuckDBLimits, parallel_run_config
    from pipelines.nightly import RunFailed, run_nightly

    limits = limits or DuckDBLimits()
    limits.apply()
    started = time.time()
    if processes:
        with dg.DagsterInstance.get() as instance:
            result = dg.execute_job(
                dg.reconstructable(_parallel_loads if loads_only else _parallel_job),
                instance=instance,
                run_config=parallel_run_config(config_path.resolve(), processes, limits, finish=not loads_only),
            )
            if not result.success:
                raise RunFailed("the multiprocess nightly job failed; see the steps' errors above")
    else:
        run_nightly(config_path, echo=lambda line: print(line, flush=True))
    finished = time.time()
    with dg.DagsterInstance.get() as instance:
        steps = _steps(instance)
    stats_path.write_text(json.dumps({"start": started, "end": finished, "steps": steps}))


def _parallel_job() -> dg.JobDefinition:
    from bench.parallel import parallel_nightly

    return parallel_nightly


def _parallel_loads() -> dg.JobDefinition:
    from bench.parallel import parallel_loads

    return parallel_loads


def run_yardstick(files: list[str], lake_folder: Path) -> None:
    """The plain DuckDB normalize pass: the delivery's files into one table of a new embedded lake
    in `lake_folder` (replaced), attached as the product attaches its lake. Prints the rows
    written and the statement's seconds as JSON."""
    from pipelines.warehouse.connection import duckdb_limits
    from pipelines.warehouse.lake import Lake, attach, open_duckdb

    shutil.rmtree(lake_folder, ignore_errors=True)
    lake = Lake.in_folder(lake_folder)
    lake_folder.mkdir(parents=True)
    lake.spill_dir.mkdir(parents=True, exist_ok=True)
    conn = open_duckdb(lake, {**duckdb_limits(), "temp_directory": str(lake.spill_dir)})
    try:
        attach(conn, lake, read_only=False)
        started = time.perf_counter()
        conn.execute(read_bench_sql("yardstick_normalize"), {"files": files})
        seconds = time.perf_counter() - started
        (rows,) = conn.execute(read_bench_sql("yardstick_count")).fetchone()
    finally:
        conn.close()
    print(json.dumps({"rows": rows, "seconds": round(seconds, 3)}), flush=True)


def run_plain_question(files: list[str]) -> None:
    """Plain DuckDB over the raw export's Parquet files: spend by service and day, the question
    the bench compares `runledger query` with. Prints the rows of the answer as JSON."""
    conn = duckdb.connect()
    try:
        rows = conn.execute(read_bench_sql("questions/plain_service_daily_spend"), {"files": files}).fetchall()
    finally:
        conn.close()
    print(json.dumps({"rows": len(rows)}), flush=True)
