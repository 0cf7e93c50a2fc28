"""A smoke run of the bench harness at 10k line items: its numbers must describe what happened.

No timing is asserted: the figures depend on the machine. What must hold is that every line
item generated was loaded and allocated, money is conserved, the re-run found nothing new and
the JSON result was written.
"""

import json
from decimal import Decimal

import pyarrow.parquet as pq
import pytest

from bench import harness
from bench.generate import data_set
from bench.harness import STAGE_ORDER, BenchFailed, BenchOptions, run_bench
from bench.report import format_results

SMOKE_ROWS = 10_000
SMOKE_RUNS = 5


@pytest.fixture(scope="module")
def smoke(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, object]:
    root = tmp_path_factory.mktemp("bench")
    options = BenchOptions(
        sizes=(SMOKE_ROWS,),
        cache_dir=root / "data",
        results_dir=root / "results",
        converter=False,
        multiprocess=True,
        runs=SMOKE_RUNS,
        timeout_seconds=900,
    )
    results, path = run_bench(options, echo=lambda _line: None)
    return results, path


def test_generated_files_hold_the_requested_rows(
    smoke: tuple[dict, object], tmp_path_factory: pytest.TempPathFactory
) -> None:
    _results, path = smoke
    dataset = data_set(path.parent.parent / "data", SMOKE_ROWS, SMOKE_RUNS)
    assert sum(pq.ParquetFile(file).metadata.num_rows for file in dataset.data_files) == SMOKE_ROWS
    assert len({file.parent.parent.name for file in dataset.data_files}) == 2  # two billing periods


def test_every_line_item_is_loaded_allocated_and_conserved(smoke: tuple[dict, object]) -> None:
    results, _ = smoke
    (size,) = results["sizes"]
    warehouse = size["warehouse"]
    # every generated line, and a derived row beside each commitment fee with an unused part
    assert warehouse["derived_rows"] > 0
    assert (
        size["rows"] == warehouse["focus_rows"] - warehouse["derived_rows"] == size["yardstick"]["rows"] == SMOKE_ROWS
    )
    assert warehouse["allocation_rows"] >= warehouse["focus_rows"]
    assert Decimal(warehouse["allocated_billed_cost"]) == Decimal(warehouse["focus_billed_cost"]) != 0
    assert warehouse["reconciliation_failures"] == 0


def test_stages_and_measurements_are_consistent(smoke: tuple[dict, object]) -> None:
    results, _ = smoke
    (size,) = results["sizes"]
    nightly = size["nightly"]
    stages = [stage["stage"] for stage in nightly["stages"]]
    assert stages == list(STAGE_ORDER)
    assert all(stage["seconds"] > 0 and stage["peak_rss_bytes"] > 0 for stage in nightly["stages"])
    assert sum(stage["seconds"] for stage in nightly["stages"]) <= nightly["wall_seconds"]
    assert (
        nightly["peak_rss_bytes"] > 0
        and max(s["peak_rss_bytes"] for s in nightly["stages"]) <= nightly["peak_rss_bytes"]
    )
    assert nightly["rows_per_second"] == round(SMOKE_ROWS / nightly["wall_seconds"])
    assert size["rerun"]["wall_seconds"] > 0 and size["yardstick"]["peak_rss_bytes"] > 0
    assert size["converter"] is None


def test_the_multiprocess_job_writes_the_same_totals_into_a_postgres_lake(smoke: tuple[dict, object]) -> None:
    results, _ = smoke
    (size,) = results["sizes"]
    multiprocess = size["multiprocess"]  # the harness fails the size when the lake's totals differ
    one, two = multiprocess["team-1"], multiprocess["team-2"]
    for measured in (one, two):
        assert "ingest" in [stage["stage"] for stage in measured["stages"]]
        assert 0 < measured["ingest_wall_seconds"] < measured["wall_seconds"]
    assert multiprocess["speed_up"] == round(one["wall_seconds"] / two["wall_seconds"], 3)
    assert "2 processes vs 1: " in format_results(results)


def test_results_are_written_as_json_and_printed(smoke: tuple[dict, object]) -> None:
    results, path = smoke
    assert json.loads(path.read_text()) == results
    assert path.name.endswith(f"-{results['commit']}.json")
    table = format_results(results)
    assert "nightly job (end to end)" in table and "yardstick DuckDB pass" in table and "10k" in table


def test_the_table_ends_with_the_peak_growth_to_the_largest_size(smoke: tuple[dict, object]) -> None:
    results, _path = smoke
    (size,) = results["sizes"]
    larger = {
        **size,
        "size": "40k",
        "nightly": {**size["nightly"], "peak_rss_bytes": size["nightly"]["peak_rss_bytes"] * 3},
    }

    table = format_results({**results, "sizes": [size, larger]})

    assert table.splitlines()[-1].startswith("peak memory 10k -> 40k: ")
    assert table.splitlines()[-1].endswith("GiB (3.00x)")


def test_a_failed_size_is_recorded_and_the_other_sizes_still_measured(
    smoke: tuple[dict, object], tmp_path, monkeypatch: pytest.MonkeyPatch
) -> None:
    results, _path = smoke
    (measured,) = results["sizes"]

    def bench_size(rows: int, _options: BenchOptions, _echo) -> dict:
        if rows == 20_000:
            raise BenchFailed("nightly job (full) on 20k failed (exit 1):\nOut of Memory Error")
        return measured

    monkeypatch.setattr(harness, "bench_size", bench_size)
    options = BenchOptions(
        sizes=(SMOKE_ROWS, 20_000, SMOKE_ROWS),
        cache_dir=tmp_path,
        results_dir=tmp_path,
        converter=False,
        multiprocess=False,
        runs=SMOKE_RUNS,
        timeout_seconds=60,
    )
    echoed: list[str] = []
    results_with_failure, path = run_bench(options, echo=echoed.append)

    assert [size["size"] for size in results_with_failure["sizes"]] == ["10k", "20k", "10k"]
    assert results_with_failure["sizes"][1]["failed"].endswith("Out of Memory Error")
    assert json.loads(path.read_text()) == results_with_failure
    assert echoed == ["20k: nightly job (full) on 20k failed (exit 1):"]
    table = format_results(results_with_failure)
    assert "  20k  FAILED: nightly job (full) on 20k failed (exit 1):" in table
    assert table.splitlines()[-1].endswith("GiB (1.00x)")
