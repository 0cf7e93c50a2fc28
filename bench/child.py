"""What the bench runs in a child process, so that each measurement has its own process tree:
the nightly job (in process or with the multiprocess executor) and the yardstick pass."""

from __future__ import annotations

import json
import time
from pathlib import Path

import dagster as dg
import duckdb

from bench.sqlfiles import read_bench_sql


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


def run_nightly_job(config_path: Path, stats_path: Path, processes: int | None = None) -> None:
    """`runledger run` on `config_path` in this process, or with `processes` the job of
    `bench.parallel` on that many processes; the steps' times go to `stats_path`.

    `$DAGSTER_HOME` must name a fresh instance folder (the parent sets it), so that the steps
    can be read back from its event log.
    """
    from pipelines.nightly import RunFailed, run_nightly

    started = time.time()
    if processes:
        from bench.parallel import parallel_run_config

        with dg.DagsterInstance.get() as instance:
            result = dg.execute_job(
                dg.reconstructable(_parallel_job),
                instance=instance,
                run_config=parallel_run_config(config_path.resolve(), processes),
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


def run_yardstick(files: list[str], database: Path) -> None:
    """The plain DuckDB normalize pass: the delivery's files into one table of `database`."""
    database.unlink(missing_ok=True)
    conn = duckdb.connect(str(database))
    try:
        conn.execute(read_bench_sql("yardstick_normalize"), {"files": files})
        (rows,) = conn.execute(read_bench_sql("yardstick_count")).fetchone()
    finally:
        conn.close()
    print(json.dumps({"rows": rows}), flush=True)
