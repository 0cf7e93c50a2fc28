"""`python -m bench scale-out`: what one more worker gives. The two billing periods of a cached
data set are loaded into one lake of the team setup (PostgreSQL catalog in a throwaway local
cluster, data files on S3: a moto server over HTTP on 127.0.0.1) by `bench.parallel`'s load
steps under Dagster's multiprocess executor, each process on one DuckDB thread: first by one
process, one period after the other, then by two processes at once. Each lake must hold the raw
export's line items and BilledCost per billing period and currency."""

from __future__ import annotations

import logging
import os
import resource
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from unittest.mock import patch

import duckdb
import yaml

from bench.harness import BenchFailed, BenchOptions, WorkFolder, _nightly, work_folder
from bench.parallel import DuckDBLimits
from bench.sqlfiles import read_bench_sql
from pipelines.config import load_config
from pipelines.warehouse.connection import connect_read_only
from pipelines.warehouse.lake import Lake
from tests.support import postgres

# One DuckDB thread per process (and one polars thread), so that N processes use N cores.
THREADS_PER_PROCESS = 1
# Dummy credentials for the moto server, through the standard AWS chain (environment).
AWS_ENVIRONMENT = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_DEFAULT_REGION": "us-east-1",
    "AWS_CONFIG_FILE": os.devnull,
    "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
}


@contextmanager
def moto_s3() -> Iterator[str]:
    """A moto server on 127.0.0.1 for the block; yields its endpoint (`http://127.0.0.1:PORT`)."""
    from moto.server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # not a line per request
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        host, port = server.get_host_and_port()
        yield f"http://{host}:{port}"
    finally:
        server.stop()


def _rows(cursor: duckdb.DuckDBPyConnection) -> list[dict]:
    columns = [column[0] for column in cursor.description]
    return [
        {**dict(zip(columns, row)), "billed_cost": str(row[columns.index("billed_cost")])} for row in cursor.fetchall()
    ]


def export_totals(files: tuple[Path, ...]) -> list[dict]:
    """Line items and BilledCost per billing period and currency of the raw export's files."""
    conn = duckdb.connect()
    try:
        return _rows(conn.execute(read_bench_sql("export_period_totals"), {"files": [str(path) for path in files]}))
    finally:
        conn.close()


def lake_totals(lake: Lake) -> list[dict]:
    """What `export_totals` counts, as the lake's focus_line_items holds it."""
    conn = connect_read_only(lake)
    try:
        return _rows(conn.execute(read_bench_sql("lake_period_totals")))
    finally:
        conn.close()


def _workers(processes: int) -> str:
    return f"{processes} process" + ("es" if processes > 1 else "")


def _own_cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def speed_up(one: float, many: float) -> float:
    """How many times faster `many` workers did the work `one` did in `one` seconds."""
    return round(one / many, 3)


def gain_per_added_worker(speed_up_of_many: float, processes: int) -> float:
    """The speed-up each worker beyond the first added (1.0: each added worker as fast as the first)."""
    return round((speed_up_of_many - 1) / (processes - 1), 3)


def _s3_team_config(work: WorkFolder, server: postgres.PostgresServer, endpoint: str, processes: int) -> Path:
    """The data set's configuration with a new lake of the team setup: its catalog a new
    PostgreSQL database, its data files a new bucket of the moto server."""
    import boto3

    bucket = f"scale-out-{processes}-{uuid.uuid4().hex[:8]}"
    boto3.client("s3", endpoint_url=endpoint).create_bucket(Bucket=bucket)
    dbname = postgres.new_database(server, f"scale_out_{processes}_{uuid.uuid4().hex[:8]}")
    config = yaml.safe_load(work.config_path.read_text())
    config["warehouse"] = {
        "catalog": {"postgres": {"host": server.host, "port": server.port, "dbname": dbname}},
        "data_path": f"s3://{bucket}/runledger/",
        "endpoint_url": endpoint,
    }
    config["reports_dir"] = f"run/scale-out-{processes}/reports"
    path = work.root / f"runledger-scale-out-{processes}.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


def measure_scale_out(
    rows: int, options: BenchOptions, processes: int = 2, echo: Callable[[str], None] = print
) -> dict:
    """The load steps of the cached data set of `rows` line items with one process, then with
    `processes`, each process on one DuckDB thread, each into a new lake.

    Raises:
        BenchFailed: a run failed, or a lake's totals differ from the raw export's.
        RuntimeError: PostgreSQL's server is not installed.
    """
    from bench.generate import data_set, size_label

    if not postgres.installed():
        raise RuntimeError("the scale-out measurement needs PostgreSQL's server (Debian's postgresql)")
    dataset = data_set(options.cache_dir, rows, options.runs)
    work = work_folder(dataset, options.work_dir)
    expected = export_totals(dataset.data_files)
    arguments = (*DuckDBLimits(threads=THREADS_PER_PROCESS).arguments(), "--loads-only")
    result: dict = {"size": size_label(rows), "rows": rows, "threads_per_process": THREADS_PER_PROCESS}
    with postgres.local_cluster() as server, moto_s3() as endpoint:
        environment = {**AWS_ENVIRONMENT, "PGUSER": server.user, "POLARS_MAX_THREADS": str(THREADS_PER_PROCESS)}
        with patch.dict(os.environ, environment):
            for workers in dict.fromkeys((1, processes)):
                config_path = _s3_team_config(work, server, endpoint, workers)
                cpu_before = _own_cpu_seconds()
                measured = _nightly(
                    work,
                    rows,
                    f"scale-out-{workers}",
                    options,
                    config_path=config_path,
                    processes=workers,
                    arguments=arguments,
                )
                totals = lake_totals(load_config(config_path).lake)
                if totals != expected:
                    raise BenchFailed(f"the lake loaded by {_workers(workers)} holds {totals}, the export {expected}")
                # the moto server (and the RSS sampler) run in this process, on the same cores
                measured["s3_server_cpu_seconds"] = round(_own_cpu_seconds() - cpu_before, 3)
                result[f"processes_{workers}"] = {**measured, "totals": totals}
                echo(
                    f"{size_label(rows)}: {_workers(workers)} × {THREADS_PER_PROCESS} thread: "
                    f"{measured['wall_seconds']:,.1f} s (load steps {measured['ingest_wall_seconds']:,.1f} s), "
                    "totals as the export's"
                )
    one, many = result["processes_1"], result[f"processes_{processes}"]
    result["processes"] = processes
    result["speed_up"] = speed_up(one["wall_seconds"], many["wall_seconds"])
    result["load_speed_up"] = speed_up(one["ingest_wall_seconds"], many["ingest_wall_seconds"])
    result["load_gain_per_added_worker"] = gain_per_added_worker(result["load_speed_up"], processes)
    result["totals"] = expected
    return result


def format_scale_out(result: dict) -> str:
    """The figures a reader quotes: each variant's wall seconds and its load steps' span, the
    speed-ups, and the totals every lake held."""
    processes = result["processes"]
    one, many = result["processes_1"], result[f"processes_{processes}"]
    threads = result["threads_per_process"]
    title = f"{result['size']} line items, two billing periods into one PostgreSQL + S3 lake"
    lines = [f"{title}, {threads} DuckDB thread per process:"]
    for workers, measured in ((1, one), (processes, many)):
        label = f"{_workers(workers)} × {threads} thread"
        lines.append(
            f"  {label}: {measured['wall_seconds']:,.1f} s wall (load steps {measured['ingest_wall_seconds']:,.1f} s; "
            f"S3 server and sampler {measured['s3_server_cpu_seconds']:,.1f} s of CPU)"
        )
    gain = result["load_gain_per_added_worker"]
    lines.append(
        f"  speed-up: {result['speed_up']:.2f}× wall, {result['load_speed_up']:.2f}× over the load steps "
        f"({gain:+.2f} per added worker)"
    )
    lines.append("  totals in every lake, as in the raw export:")
    for row in result["totals"]:
        items = f"{row['line_items']:,} line items"
        lines.append(f"    {row['billing_period']} {row['currency']}: {items}, BilledCost {row['billed_cost']}")
    return "\n".join(lines)
