"""The bench's measurement tools for the memory limit and the scale-out: what they parse, the
arithmetic and tables they print, and the DuckDB settings they give the measured processes."""

from datetime import date
from pathlib import Path

import pytest
from click.testing import CliRunner

from bench.__main__ import main
from bench.memory import format_memory_limits, parse_limits
from bench.parallel import DuckDBLimits, load_step_name, parallel_run_config
from bench.scale_out import format_scale_out, gain_per_added_worker, speed_up
from pipelines.sources.delivery import memory_connection
from pipelines.warehouse import connection
from pipelines.warehouse.lake import Lake, open_duckdb

GIB = 2**30


def test_memory_limits_are_read_in_order_in_duckdbs_spelling() -> None:
    assert parse_limits("2.5GiB, 2GiB,3000MiB") == ("2.5GiB", "2GiB", "3000MiB")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("2.5G", "'2.5G' is not a memory limit: a number and a unit, e.g. 2.5GiB or 2000MiB"),
        ("2GiB,2GiB", "a memory limit is given twice: 2GiB,2GiB"),
        (" , ", "no memory limit given, e.g. 2.5GiB,2GiB"),
    ],
)
def test_a_memory_limit_duckdb_would_not_read_is_refused(text: str, message: str) -> None:
    with pytest.raises(ValueError, match="^" + message.replace("(", r"\(").replace(")", r"\)") + "$"):
        parse_limits(text)


def test_the_memory_command_refuses_a_bad_limit_as_a_usage_error() -> None:
    result = CliRunner().invoke(main, ["memory", "--size", "10k", "--limits", "2.5G"])
    assert result.exit_code == 2
    assert "Invalid value for '--limits': '2.5G' is not a memory limit" in result.output


def test_loads_only_needs_the_multiprocess_job(tmp_path) -> None:
    config = tmp_path / "runledger.yaml"
    config.write_text("{}")
    result = CliRunner().invoke(
        main, ["nightly", "--config", str(config), "--stats", str(tmp_path / "s.json"), "--loads-only"]
    )
    assert result.exit_code == 2
    assert "--loads-only needs --processes" in result.output


def _stage(name: str, seconds: float, peak_gib: float) -> dict:
    return {"stage": name, "seconds": seconds, "peak_rss_bytes": int(peak_gib * GIB)}


def test_the_memory_table_puts_each_limit_beside_the_first() -> None:
    result = {
        "size": "5M",
        "runs": 200,
        "limits": [
            {
                "memory_limit": "2.5GiB",
                "wall_seconds": 200.0,
                "peak_rss_bytes": int(3.25 * GIB),
                "stages": [_stage("ingest", 50.0, 3.25), _stage("reports", 70.0, 1.5)],
            },
            {
                "memory_limit": "2GiB",
                "wall_seconds": 210.0,
                "peak_rss_bytes": int(2.75 * GIB),
                "stages": [_stage("ingest", 56.0, 2.75)],
            },
        ],
    }
    assert format_memory_limits(result).splitlines() == [
        "5M line items, 200 runs: the nightly job at each DuckDB memory limit",
        "                          2.5GiB         2GiB",
        "nightly job, wall s        200.0        210.0",
        "  ÷ 2.5GiB                 1.00×        1.05×",
        "peak RSS, GiB               3.25         2.75",
        "  ingest, s (GiB)    50.0 (3.25)  56.0 (2.75)",
        "  reports, s (GiB)   70.0 (1.50)             ",
    ]


def test_the_speed_up_and_the_gain_per_added_worker() -> None:
    assert speed_up(120.0, 80.0) == 1.5
    assert gain_per_added_worker(1.5, 2) == 0.5
    assert gain_per_added_worker(2.2, 4) == 0.4
    assert gain_per_added_worker(0.9, 2) == -0.1


def test_the_scale_out_summary_gives_both_variants_the_speed_ups_and_the_totals() -> None:
    result = {
        "size": "5M",
        "processes": 2,
        "threads_per_process": 1,
        "processes_1": {"wall_seconds": 130.0, "ingest_wall_seconds": 120.0, "s3_server_cpu_seconds": 6.0},
        "processes_2": {"wall_seconds": 80.0, "ingest_wall_seconds": 70.0, "s3_server_cpu_seconds": 6.5},
        "speed_up": speed_up(130.0, 80.0),
        "load_speed_up": speed_up(120.0, 70.0),
        "load_gain_per_added_worker": gain_per_added_worker(speed_up(120.0, 70.0), 2),
        "totals": [
            {"billing_period": "2026-10", "currency": "USD", "line_items": 2500000, "billed_cost": "123.4500000000"}
        ],
    }
    assert format_scale_out(result).splitlines() == [
        "5M line items, two billing periods into one PostgreSQL + S3 lake, 1 DuckDB thread per process:",
        "  1 process × 1 thread: 130.0 s wall (load steps 120.0 s; S3 server and sampler 6.0 s of CPU)",
        "  2 processes × 1 thread: 80.0 s wall (load steps 70.0 s; S3 server and sampler 6.5 s of CPU)",
        "  speed-up: 1.62× wall, 1.71× over the load steps (+0.71 per added worker)",
        "  totals in every lake, as in the raw export:",
        "    2026-10 USD: 2,500,000 line items, BilledCost 123.4500000000",
    ]


def _setting(name: str) -> object:
    conn = memory_connection()
    try:
        ((value,),) = conn.execute("select current_setting($name)", {"name": name}).fetchall()
    finally:
        conn.close()
    return value


def test_the_bench_limits_duckdb_in_its_own_process_only(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(connection, "_LIMITS", {})
    assert _setting("memory_limit") == "2.5 GiB"
    DuckDBLimits(memory_limit="2GiB", threads=1).apply()
    assert (_setting("memory_limit"), _setting("threads")) == ("2.0 GiB", 1)
    lake = Lake.in_folder(tmp_path / "lake")
    writer = open_duckdb(lake, connection._settings(lake))
    try:
        settings = writer.execute("select current_setting('memory_limit'), current_setting('threads')").fetchall()
    finally:
        writer.close()
    assert settings == [("2.0 GiB", 1)]


def test_each_step_of_the_multiprocess_job_gets_the_limits() -> None:
    config = parallel_run_config("/data/runledger.yaml", 2, DuckDBLimits(threads=1), finish=False)
    october = config["ops"][load_step_name(date(2026, 10, 1))]["config"]
    assert october == {
        "config_path": "/data/runledger.yaml",
        "memory_limit": None,
        "threads": 1,
        "billing_period": "2026-10-01",
    }
    assert "finish" not in config["ops"]
    assert config["execution"] == {"config": {"max_concurrent": 2}}
    assert DuckDBLimits(memory_limit="2GiB", threads=1).arguments() == ["--memory-limit", "2GiB", "--threads", "1"]
