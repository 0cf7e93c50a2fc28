"""A smoke run of the bench harness at 10k line items: its numbers must describe what happened.

No timing is asserted: the figures depend on the machine. What must hold is that every line
item generated was loaded and allocated, money is conserved, the re-delivered month replaced the
first delivery, a revised budget rewrote its run's report only, every question was answered,
every target is printed beside its figure and the JSON result was written.
"""

import json
from decimal import Decimal
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from bench import harness
from bench.generate import REGISTRY_RUNS, data_set, redelivery
from bench.harness import CLI_COMMANDS, STAGE_ORDER, BenchFailed, BenchOptions, cli_startup, run_bench
from bench.questions import QUESTIONS
from bench.report import format_results, format_targets_markdown
from bench.targets import NIGHTS, cli_figures, figures
from tests.support.demo_lake import SharedDemo, copy_demo

SMOKE_ROWS = 10_000
SMOKE_RUNS = 5
PERIOD_ROWS = SMOKE_ROWS // 2


@pytest.fixture(scope="module")
def smoke(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, object]:
    root = tmp_path_factory.mktemp("bench")
    options = BenchOptions(
        sizes=(SMOKE_ROWS,),
        cache_dir=root / "data",
        work_dir=root / "work",
        results_dir=root / "results",
        converter=False,
        multiprocess=True,
        cli=False,  # measured on the demo: test_the_cli_is_timed_on_the_demo_against_the_bare_duckdb_process
        runs=SMOKE_RUNS,
        timeout_seconds=900,
    )
    results, path = run_bench(options, echo=lambda _line: None)
    return results, path


def _size(smoke: tuple[dict, object]) -> dict:
    results, _ = smoke
    (size,) = results["sizes"]
    assert "failed" not in size, size.get("failed")
    return size


def test_generated_files_hold_the_requested_rows(smoke: tuple[dict, object]) -> None:
    _results, path = smoke
    dataset = data_set(path.parent.parent / "data", SMOKE_ROWS, SMOKE_RUNS)
    assert sum(pq.ParquetFile(file).metadata.num_rows for file in dataset.data_files) == SMOKE_ROWS
    assert len({file.parent.parent.name for file in dataset.data_files}) == 2  # two billing periods
    delivered = redelivery(dataset)
    assert sum(pq.ParquetFile(file).metadata.num_rows for file in delivered.data_files) == delivered.rows == PERIOD_ROWS


def test_every_line_item_is_loaded_allocated_and_conserved(smoke: tuple[dict, object]) -> None:
    size = _size(smoke)
    warehouse = size["warehouse"]
    # every generated line, and a derived row beside each commitment fee with an unused part
    assert warehouse["derived_rows"] > 0
    assert (
        size["rows"] == warehouse["focus_rows"] - warehouse["derived_rows"] == size["yardstick"]["rows"] == SMOKE_ROWS
    )
    assert warehouse["allocation_rows"] >= warehouse["focus_rows"]
    assert Decimal(warehouse["allocated_billed_cost"]) == Decimal(warehouse["focus_billed_cost"]) != 0
    assert warehouse["reconciliation_failures"] == 0


def test_the_redelivered_month_replaces_the_first_delivery_and_is_conserved(smoke: tuple[dict, object]) -> None:
    size = _size(smoke)
    before, after = size["warehouse"], size["redelivered"]["warehouse"]
    assert size["redelivered"]["rows"] == size["yardstick_redelivered"]["rows"] == PERIOD_ROWS
    # the month's lines were replaced, not added: still 10k generated lines, other money
    assert after["focus_rows"] - after["derived_rows"] == SMOKE_ROWS
    assert Decimal(after["focus_billed_cost"]) != Decimal(before["focus_billed_cost"])
    assert Decimal(after["allocated_billed_cost"]) == Decimal(after["focus_billed_cost"])
    assert after["reconciliation_failures"] == 0


def test_a_revised_budget_rewrites_its_runs_report_only(smoke: tuple[dict, object]) -> None:
    revised = _size(smoke)["revised_budgets"]
    assert revised["revised_runs"] == ["run-000"]  # every twentieth run has a budget
    assert revised["rewritten_reports"] == ["run-000"]
    # a report per run with spend: the tagged runs and the registered ones
    assert revised["reports"] == _size(smoke)["nightly"]["reports"] == SMOKE_RUNS + min(REGISTRY_RUNS, SMOKE_RUNS)


def test_every_question_is_answered_three_times(smoke: tuple[dict, object]) -> None:
    size = _size(smoke)
    questions = size["questions"]
    assert list(questions) == list(QUESTIONS)
    for answer in (*questions.values(), size["plain_duckdb"]):
        assert len(answer["seconds"]) == 3 and answer["median_seconds"] == sorted(answer["seconds"])[1]
        assert answer["rows"] > 0
    assert questions["top_unattributed"]["rows"] == 20
    assert questions["run_gpu_hours"]["rows"] == SMOKE_RUNS + min(REGISTRY_RUNS, SMOKE_RUNS)


def test_stages_and_measurements_are_consistent(smoke: tuple[dict, object]) -> None:
    size = _size(smoke)
    nightly = size["nightly"]
    stages = [stage["stage"] for stage in nightly["stages"]]
    assert stages == [stage for stage in STAGE_ORDER if stage in stages]
    assert {"ingest", "cost_allocations", "reports"} <= set(stages)
    assert all(stage["seconds"] > 0 and stage["peak_rss_bytes"] > 0 for stage in nightly["stages"])
    assert sum(stage["seconds"] for stage in nightly["stages"]) <= nightly["wall_seconds"]
    assert (
        nightly["peak_rss_bytes"] > 0
        and max(s["peak_rss_bytes"] for s in nightly["stages"]) <= nightly["peak_rss_bytes"]
    )
    assert nightly["rows_per_second"] == round(SMOKE_ROWS / nightly["wall_seconds"])
    assert 0 < size["yardstick"]["statement_seconds"] < size["yardstick"]["wall_seconds"]
    assert size["rerun"]["wall_seconds"] > 0 and size["yardstick"]["peak_rss_bytes"] > 0
    assert size["converter"] is None


def test_the_multiprocess_job_writes_the_same_totals_into_a_postgres_lake(smoke: tuple[dict, object]) -> None:
    multiprocess = _size(smoke)["multiprocess"]  # the harness fails the size when the lake's totals differ
    one, two = multiprocess["team-1"], multiprocess["team-2"]
    for measured in (one, two):
        assert "ingest" in [stage["stage"] for stage in measured["stages"]]
        assert 0 < measured["ingest_wall_seconds"] < measured["wall_seconds"]
    assert multiprocess["speed_up"] == round(one["wall_seconds"] / two["wall_seconds"], 3)


def test_every_target_is_printed_beside_its_figure(smoke: tuple[dict, object]) -> None:
    results, path = smoke
    size = _size(smoke)
    assert json.loads(path.read_text()) == results
    assert path.name.endswith(f"-{results['commit']}.json")
    table = format_results(results)
    measured = figures(size)
    # ingest ×2, attribution, reports ×2, end to end, re-delivery, six questions, slowest ÷ plain, memory, re-run
    assert len(measured) == 16
    for figure in measured:
        assert f"{figure.name:<58} {figure.measured:<32} {figure.target:<12}" in table
    markdown = format_targets_markdown(results).splitlines()
    assert markdown[0] == "| figure | target | 10k |" and len(markdown) == 2 + len(measured)


def test_a_figure_beyond_its_target_is_marked_missed(smoke: tuple[dict, object]) -> None:
    size = _size(smoke)
    slow_reports = {
        **size,
        "nightly": {
            **size["nightly"],
            "stages": [
                {**stage, "seconds": 31.0} if stage["stage"] == "reports" else stage
                for stage in size["nightly"]["stages"]
            ],
        },
    }
    (render,) = [figure for figure in figures(slow_reports) if figure.name.startswith("first render")]
    assert (render.measured, render.target, render.met) == (
        f"31.0 s ({size['nightly']['reports']} reports)",
        "≤ 30 s",
        False,
    )
    larger = {"size": "40k"} | {
        key: {**value, "peak_rss_bytes": value["peak_rss_bytes"] * 3} if key in NIGHTS else value
        for key, value in size.items()
        if key != "size"
    }
    (growth,) = [figure for figure in figures(larger, previous=size) if figure.name == "peak memory ÷ 10k's"]
    assert (growth.measured, growth.target, growth.met) == ("3.00×", "≤ 1.3×", False)


def test_a_failed_size_is_recorded_and_the_other_sizes_still_measured(
    smoke: tuple[dict, object], tmp_path, monkeypatch: pytest.MonkeyPatch
) -> None:
    measured = _size(smoke)

    def bench_size(rows: int, _options: BenchOptions, _echo) -> dict:
        if rows == 20_000:
            raise BenchFailed("nightly job (full) on 20k failed (exit 1):\nOut of Memory Error")
        return measured

    monkeypatch.setattr(harness, "bench_size", bench_size)
    options = BenchOptions(
        sizes=(SMOKE_ROWS, 20_000, SMOKE_ROWS),
        cache_dir=tmp_path,
        work_dir=tmp_path,
        results_dir=tmp_path,
        converter=False,
        multiprocess=False,
        runs=SMOKE_RUNS,
        timeout_seconds=60,
        cli=False,
    )
    echoed: list[str] = []
    results_with_failure, path = run_bench(options, echo=echoed.append)

    assert [size["size"] for size in results_with_failure["sizes"]] == ["10k", "20k", "10k"]
    assert results_with_failure["sizes"][1]["failed"].endswith("Out of Memory Error")
    assert json.loads(path.read_text()) == results_with_failure
    assert echoed == ["20k: nightly job (full) on 20k failed (exit 1):"]
    table = format_results(results_with_failure)
    assert "  20k  FAILED: nightly job (full) on 20k failed (exit 1):" in table
    assert "peak memory ÷ 10k's" in table  # the third size against the first


def _cli(seconds: dict[str, float]) -> dict:
    return {
        "load_average": {"before": [0.5, 0.4, 0.3], "after": [0.5, 0.4, 0.3]},
        "commands": {
            name: {"command": name, "seconds": [value] * 3, "median_seconds": value} for name, value in seconds.items()
        },
    }


def test_the_cli_targets_are_ratios_to_the_bare_duckdb_process_and_seconds() -> None:
    cli = _cli({"bare": 0.2, "help": 0.29, "usage": 0.31, "config": 0.2, "check": 0.6, "query": 0.5, "report": 1.2})
    assert [(figure.name, figure.measured, figure.target, figure.met) for figure in cli_figures(cli)] == [
        ("CLI: runledger --help ÷ bare DuckDB", "1.45× (0.29 s vs 0.20 s)", "≤ 1.5×", True),
        ("CLI: a usage error (run --period 2026-13) ÷ bare DuckDB", "1.55× (0.31 s vs 0.20 s)", "≤ 1.5×", False),
        ("CLI: a config error (a missing --config) ÷ bare DuckDB", "1.00× (0.20 s vs 0.20 s)", "≤ 1.5×", True),
        ("CLI: runledger check ÷ bare DuckDB", "3.00× (0.60 s vs 0.20 s)", "≤ 3×", True),
        ("CLI: query on a summary table (run_costs) ÷ bare DuckDB", "2.50× (0.50 s vs 0.20 s)", "≤ 2.5×", True),
        ("CLI: report --run of an unchanged run ÷ bare DuckDB", "6.00× (1.20 s vs 0.20 s)", "≤ 3×", False),
        ("CLI: runledger --help", "0.29 s", "≤ 0.3 s", True),
        ("CLI: a usage error (run --period 2026-13)", "0.31 s", "≤ 0.3 s", False),
        ("CLI: a config error (a missing --config)", "0.20 s", "≤ 0.3 s", True),
        ("CLI: runledger check", "0.60 s", "≤ 1 s", True),
        ("CLI: query on a summary table (run_costs)", "0.50 s", "≤ 1 s", True),
        ("CLI: report --run of an unchanged run", "1.20 s", "≤ 1 s", False),
    ]
    results = {
        "commit": "abc1234",
        "started_at": "2026-12-07T18:00:00+00:00",
        "machine": {"cpus": 2, "duckdb": "1.5.5"},
        "sizes": [],
        "cli": cli,
    }
    table = format_results(results).splitlines()
    assert " demo  CLI: report --run of an unchanged run ÷ bare DuckDB" in "\n".join(table)
    assert table[-1].split()[-6:] == ["1.20", "s", "≤", "1", "s", "MISSED"]
    markdown = format_targets_markdown(results).splitlines()
    assert markdown[:4] == ["No size was measured.", "", "| CLI on the demo | target | measured |", "|---|---|---:|"]
    assert len(markdown) == 4 + 12
    assert markdown[-1] == "| report --run of an unchanged run | ≤ 1 s | 1.20 s ✗ |"


def test_the_cli_is_timed_on_the_demo_against_the_bare_duckdb_process(shared_demo: SharedDemo, tmp_path: Path) -> None:
    measured = cli_startup(copy_demo(shared_demo, tmp_path / "demo").parent, echo=lambda _line: None)
    assert list(measured["commands"]) == list(CLI_COMMANDS) == [
        "bare", "help", "usage", "config", "check", "query", "report",
    ]  # fmt: skip
    for command in measured["commands"].values():
        assert len(command["seconds"]) == 3 and command["median_seconds"] == command["seconds"][1] > 0
    assert measured["commands"]["report"]["command"] == "runledger report --run llm-7b-pt-r1"
    assert len(cli_figures(measured)) == 12
