"""The `runledger` command line: exit codes (0 ok, 1 run failed, 2 usage/config) and messages."""

import csv
import json
import math
import os
import pty
import re
import subprocess
import sys
from datetime import UTC, date, datetime, timedelta
from decimal import ROUND_HALF_EVEN, Decimal, localcontext
from fractions import Fraction
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from pipelines.cli import main
from pipelines.export import focus_columns
from pipelines.plans.estimate import estimate
from pipelines.plans.files import load_budget
from tests.support.demo_lake import SharedDemo, copy_demo
from tests.support.lake import lake_of, reading
from tests.support.warehouse_state import table_checksums


@pytest.fixture(scope="module")
def demo_output(shared_demo: SharedDemo, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """`runledger demo --dir <folder>` as a newcomer runs it (the session's demo): a copy of the demo
    project for this module's runs, and what the demo printed."""
    return copy_demo(shared_demo, tmp_path_factory.mktemp("cli") / "project"), shared_demo.output


@pytest.fixture(scope="module")
def demo(demo_output: tuple[Path, str]) -> Path:
    return demo_output[0]


def invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.output


def test_the_demo_prints_no_warning(demo_output: tuple[Path, str]) -> None:
    # the demo is judged fresh at its own "now", and its spend with no run is mostly commitment fees,
    # support and tax, which no tag can move: nothing a newcomer would read as broken
    _, output = demo_output
    assert "billing periods 2026-10, 2026-11" in output and "reconciliation: 4 source periods" in output
    # `warning:` lines of the warning checks, or a Python warning (a run's status may be `warning`)
    assert not re.findall(r"(?im)^\s*warning:.*$", output)
    assert not re.findall(r"^.*\wWarning\b.*$", output, re.MULTILINE)


def test_run_prints_the_summary_and_the_report_paths(demo: Path) -> None:
    code, output = invoke("run", "--config", str(demo), "--period", "2026-11")
    assert code == 0
    assert "llm-7b-pt-r1" in output and "report.html" in output and "2026-11:" in output
    for run in ("llm-7b-pt-r1", "llm-13b-ft-r2", "llm-3b-pt-gcp"):
        assert re.search(rf"^{run} .* (under|on_track|warning|over|within)$", output, re.MULTILINE)
        assert f"{run}/report.html" in output
    assert "budget alerts (first day the cumulative effective spend reached the threshold):" in output
    assert re.search(r"^llm-7b-pt-r1\s+over\s+2026-10-\d\d\s", output, re.MULTILINE)


RUNLEDGER = str(Path(sys.executable).with_name("runledger"))
STAMP = r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)"
SECONDS = r" \((\d+\.\d) s\)"
STAGE_ENDS = [
    # the 7B run's 24 hourly step timings are events too; its 128 GPUs' telemetry day is 3,072 GPU-hours
    (
        r"  run registry: 3 runs; budgets: 3 baselines, 2 group budgets; run events: 107; cluster usage intervals: 26; "
        r"GPU telemetry: 3,072 GPU-hours"
    ),
    # the p5-cluster's 288 node lines split among its jobs and idle capacity: 194 parts more
    r"  2026-11: 3,146 line items from 2 sources, 3,340 allocations, conservation ok",
    r"  reports: \d+ files; rendered \d+ of 17 run reports, \d+ unchanged",
]


def test_run_logs_each_stage_with_its_utc_time_and_seconds_and_no_bar_into_a_pipe(demo: Path) -> None:
    started = datetime.now(UTC).replace(microsecond=0)
    run = subprocess.run(
        [RUNLEDGER, "run", "--config", str(demo), "--period", "2026-11"], capture_output=True, text=True, check=False
    )
    finished = datetime.now(UTC)
    assert run.returncode == 0, run.stderr
    # a cron log gets plain lines: no carriage return, no escape sequence, no bar
    assert not re.search(r"[\x00-\x09\x0b-\x1f\x7f]", run.stderr), run.stderr
    lines = run.stderr.splitlines()
    stamps = [re.match(rf"{STAMP} ", line) for line in lines]
    assert all(stamps), lines
    moments = [datetime.strptime(m[1], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC) for m in stamps]
    assert started <= moments[0] and moments == sorted(moments) and moments[-1] <= finished
    text = [line[len("2026-12-02T02:00:00Z ") :] for line in lines]
    assert text[0] == "runledger: 2 billing sources, billing periods 2026-11"
    ends = [re.fullmatch(rf"(.*){SECONDS}", line) for line in text]
    ends = [m for m in ends if m]
    assert len(ends) == len(STAGE_ENDS) and all(re.fullmatch(p, m[1]) for p, m in zip(STAGE_ENDS, ends)), text
    stage_seconds = [Decimal(m[2]) for m in ends]
    total = re.fullmatch(r"runledger: done in (\d+\.\d) s", text[-1])
    # each figure is rounded to 0.1 s, so the stages' sum may pass the total by 0.05 per figure
    assert total and sum(stage_seconds) <= Decimal(total[1]) + Decimal("0.05") * (len(stage_seconds) + 1)
    assert float(total[1]) <= (finished - started).total_seconds() + 1


def test_run_draws_a_progress_bar_on_a_terminal(demo: Path) -> None:
    terminal, stderr = pty.openpty()
    run = subprocess.Popen(
        [RUNLEDGER, "run", "--config", str(demo), "--period", "2026-11"], stdout=subprocess.PIPE, stderr=stderr
    )
    os.close(stderr)
    output = b""
    while True:
        try:
            chunk = os.read(terminal, 4096)
        except OSError:  # the run closed the terminal
            break
        if not chunk:
            break
        output += chunk
    os.close(terminal)
    assert run.wait(timeout=60) == 0
    run.stdout.close()
    screen = output.decode()
    bars = list(dict.fromkeys(re.findall(r"\[[#-]{30}\] \d/3 stages: [^\r\x1b]*", screen)))
    assert bars == [
        "[------------------------------] 0/3 stages: inputs",
        "[##########--------------------] 1/3 stages: 2026-11",
        "[####################----------] 2/3 stages: reconciliation, budgets, waste, reports",
        "[##############################] 3/3 stages: done",
    ], screen
    # each bar is erased before a stage line scrolls above it, and the last one at the end
    assert screen.count("\r\x1b[K") >= len(bars) and screen.endswith("\r\x1b[K")
    assert re.search(rf"{STAMP}   2026-11: 3,146 line items .*{SECONDS}", screen)


def test_run_takes_a_period_as_its_dagster_partition_key(demo: Path) -> None:
    code, output = invoke("run", "--config", str(demo), "--period", "2026-10-01")
    assert code == 0
    assert "billing periods 2026-10\n" in output and "2026-10:" in output and "2026-11:" not in output


def test_query_formats(demo: Path) -> None:
    code, output = invoke(
        "query",
        "--config",
        str(demo),
        "--format",
        "json",
        "select training_run, sum(effective_cost) as cost from run_costs where training_run like 'llm-%' "
        "group by 1 order by 1",
    )
    assert code == 0
    rows = json.loads(output)
    assert [row["training_run"] for row in rows] == ["llm-13b-ft-r2", "llm-3b-pt-gcp", "llm-7b-pt-r1"]
    code, output = invoke("query", "--config", str(demo), "--format", "csv", "select 1 as one")
    assert (code, output.splitlines()) == (0, ["one", "1"])


def test_check_and_estimate(demo: Path, tmp_path: Path) -> None:
    code, output = invoke("check", "--config", str(demo))
    assert code == 0 and "5 sources, 3 registered runs, 3 budgets" in output and "107 run events in files" in output
    # each billing source listed; no overlap warned of: no resource of the demo's data is claimed twice
    assert output.splitlines()[1:] == [
        "source aws-main: billing periods 2026-10, 2026-11",
        "source gcp-main: billing periods 2026-10, 2026-11",
    ]
    # an eval run claiming one of the 13B run's instances at the same time: the instance is named
    runs = tmp_path / "runs.yaml"
    registry = (demo.parent / ".runledger" / "demo" / "runs.yaml").read_text()
    runs.write_text(registry + "- {id: eval-13b, start: 2026-11-01T00:00:00Z, resources: ['i-0b13*0002']}\n")
    config = tmp_path / "runledger.yaml"
    config.write_text(f"warehouse: {lake_of(demo.parent).sqlite_file.parent}\nattribution: {{runs: {runs}}}\n")
    code, output = invoke("check", "--config", str(config))
    assert (code, output.splitlines()[1:]) == (
        0,
        [
            (
                "registry overlap: runs llm-13b-ft-r2 ('i-0b13*') and eval-13b ('i-0b13*0002') both claim resources "
                "such as 'i-0b13f5e6d7c8a0002' from 2026-11-01T00:00:00Z to 2026-11-14T00:00:00Z; their lines are "
                "split by weight 1:1"
            )
        ],
    )
    code, output = invoke("estimate", str(demo.parent / ".runledger" / "demo" / "budgets" / "llm-7b-pt-r1.yaml"))
    assert code == 0 and "GPU-hours" in output


def test_check_names_a_budget_in_another_currency_than_its_run_is_billed_in(demo: Path, tmp_path: Path) -> None:
    budgets = tmp_path / "budgets"
    budgets.mkdir()
    budget = budgets / "llm-13b-ft-r2.yaml"
    budget.write_text(
        (demo.parent / ".runledger" / "demo" / "budgets" / "llm-13b-ft-r2.yaml")
        .read_text()
        .replace("currency: USD", "currency: EUR")
    )
    config = tmp_path / "runledger.yaml"
    config.write_text(f"warehouse: {lake_of(demo.parent).sqlite_file.parent}\nbudgets: {budgets}\n")
    assert invoke("check", "--config", str(config)) == (
        2,
        (
            f"error: {budget}: currency: EUR, but the allocations of 'llm-13b-ft-r2' are billed in USD; RunLedger does "
            "not convert currencies, so set the budget's currency to the billing currency\n"
            "check: 1 problem found, nothing was run\n"
        ),
    )


def test_check_lists_the_known_values_of_a_group_budget_scope_that_matches_nothing(demo: Path, tmp_path: Path) -> None:
    budgets = tmp_path / "budgets"
    budgets.mkdir()
    group = "currency: USD\nperiod: monthly\namount: 3000\nthresholds: {warning: 0.8, over: 1.0}\n"
    typo = budgets / "platform.yaml"
    typo.write_text("scope: {owner: ml-platfrom}\n" + group)
    team = budgets / "team.yaml"
    team.write_text("scope: {team: llm}\n" + group)
    (budgets / "sweep.yaml").write_text("scope: {experiment: lr-sweep-1b}\n" + group)  # known: no problem
    config = tmp_path / "runledger.yaml"
    runs = demo.parent / ".runledger" / "demo" / "runs.yaml"
    config.write_text(
        f"warehouse: {lake_of(demo.parent).sqlite_file.parent}\nbudgets: {budgets}\nattribution: {{runs: {runs}}}\n"
    )
    assert invoke("check", "--config", str(config)) == (
        2,
        (
            f"error: {team}: scope.team: not a dimension RunLedger attributes; use one of experiment, owner, "
            "dataset_version, cluster (a custom dimension is added under attribution.dimensions in runledger.yaml)\n"
            f"error: {typo}: scope.owner: no owner 'ml-platfrom' in the spend of the lake "
            f"{lake_of(demo.parent).sqlite_file.parent} or the run registry, so the budget counts no spend; known "
            "values (closest first): ml-platform, carol, bob, erin, dana, alice\n"
            "check: 2 problems found, nothing was run\n"
        ),
    )


def test_estimate_from_run_scales_the_demo_pilot_to_a_13b_run(demo: Path, tmp_path: Path) -> None:
    out = tmp_path / "llm-13b.yaml"
    code, output = invoke(
        "estimate", "--config", str(demo), "--from-run", "llm-7b-pt-r1", "--parameters", "13e9", "--tokens", "1.3e12",
        "--gpus", "512", "--start", "2026-12-01", "--out", str(out),
    )  # fmt: skip
    assert code == 0, output

    ((tokens_trained, throughput_7b, gpu_hours_7b, wall_7b),) = warehouse_rows(
        demo,
        "select tokens_trained, tokens_per_gpu_second, gpu_hours, wall_clock_hours from run_progress "
        "where training_run = 'llm-7b-pt-r1'",
    )
    ((rate,),) = warehouse_rows(
        demo,
        "select actual_rate from budget_variance where training_run = 'llm-7b-pt-r1' and cost_category = 'compute'",
    )
    costs = dict(
        warehouse_rows(
            demo,
            "select cost_category, sum(effective_cost) from run_costs where training_run = 'llm-7b-pt-r1' group by 1",
        )
    )
    # by hand from what the 7B pilot measured: its throughput x 6 x 7e9 / (6 x 13e9) FLOPs per token x 0.9
    # (512 GPUs > its 128); its overhead, billed GPU-hours / the GPU-hours its tokens took at that throughput
    # - 1; 1.3e12 tokens at that throughput and overhead, at its compute rate; its storage and network per
    # wall-clock hour for the 13B run's wall-clock hours
    throughput = _exact(Fraction(throughput_7b) * Fraction(7, 13) * Fraction("0.9"))
    overhead = _exact(Fraction(gpu_hours_7b) * 3600 * Fraction(throughput_7b) / tokens_trained - 1)
    gpu_hours = _exact(Fraction(13 * 10**11) / (Fraction(throughput) * 3600) * (1 + Fraction(overhead)))
    wall_hours = _exact(Fraction(gpu_hours) / 512)
    budget = load_budget(out)
    assert budget.model.tokens_per_second_per_gpu == throughput and budget.model.overhead == overhead
    assert budget.model.gpu_hour_price == rate and budget.model.gpus == 512
    result = estimate(budget)
    assert result.gpu_hours == gpu_hours and result.wall_hours == wall_hours
    assert result.costs == {
        "compute": _exact(Fraction(gpu_hours) * Fraction(rate)),
        "storage": _exact(Fraction(costs["storage"]) / Fraction(wall_7b) * Fraction(wall_hours)),
        "network": _exact(Fraction(costs["network"]) / Fraction(wall_7b) * Fraction(wall_hours)),
    }
    assert budget.window.end == date(2026, 12, 1) + timedelta(days=math.ceil(wall_hours / 24))
    assert f"{'GPU-hours':<28}{gpu_hours:>20,.2f}" in output and f"{'total':<28}{result.total:>20,.2f}" in output
    assert "the pilot's data 633.60, monitoring 184.92: add what applies under `fixed:`" in output

    # docs/semantics.md shows this very estimate
    documented = (Path(__file__).parents[2] / "docs" / "semantics.md").read_text()
    for line in output.splitlines():
        if line.strip() and not line.startswith("budget written"):
            assert line in documented, line

    # without --out the budget goes to stdout, its explanation as comments
    code, printed = invoke(
        "estimate", "--config", str(demo), "--from-run", "llm-7b-pt-r1", "--parameters", "13e9", "--tokens", "1.3e12",
        "--gpus", "512", "--start", "2026-12-01",
    )  # fmt: skip
    assert code == 0 and printed == out.read_text() and printed.startswith("# llm-7b-pt-r1-scaled: scaled from")


def test_estimate_from_run_refuses_an_unknown_run_and_one_without_progress(demo: Path) -> None:
    code, output = invoke("estimate", "--config", str(demo), "--from-run", "llm-7b-pt-r2")
    assert (code, output.strip()) == (
        2,
        (
            "error: --from-run llm-7b-pt-r2: no such run in the warehouse; did you mean 'llm-7b-pt-r1'? give a run "
            'of `runledger query "select training_run from run_progress"`'
        ),
    )
    code, output = invoke("estimate", "--config", str(demo), "--from-run", "llm-13b-ft-r2")
    assert code == 2 and "error: --from-run llm-13b-ft-r2: the run has no progress" in output
    code, output = invoke("estimate", "--config", str(demo), "--from-run", "llm-3b-pt-gcp")
    assert code == 2 and "its progress has no tokens_trained, tokens_per_gpu_second" in output
    budget = demo.parent / ".runledger" / "demo" / "budgets" / "llm-7b-pt-r1.yaml"
    code, output = invoke("estimate", str(budget), "--from-run", "llm-7b-pt-r1")
    assert (code, output.strip()) == (2, "error: give exactly one of BUDGET_FILE or --from-run PILOT")
    code, output = invoke("estimate", str(budget), "--gpus", "512")
    assert (code, output.strip()) == (2, "error: --gpus: only with --from-run PILOT")


def _exact(value: Fraction) -> Decimal:
    """The fraction rounded to 10 decimals, half to even, as the resource model quantizes."""
    with localcontext(prec=80):
        return (Decimal(value.numerator) / Decimal(value.denominator)).quantize(
            Decimal("1e-10"), rounding=ROUND_HALF_EVEN
        )


def test_config_errors_exit_2_naming_the_key(tmp_path: Path) -> None:
    config = tmp_path / "runledger.yaml"
    config.write_text("sources:\n  - {name: a, kind: focus, path: missing-folder}\n")
    code, output = invoke("run", "--config", str(config))
    assert code == 2 and "sources[0].path" in output and str(config) in output
    code, output = invoke("report", "--config", str(config))
    assert code == 2


def test_bad_budget_exits_2_naming_file_and_key(demo: Path, tmp_path: Path) -> None:
    budgets = tmp_path / "budgets"
    budgets.mkdir()
    source = (demo.parent / ".runledger" / "demo" / "budgets" / "llm-7b-pt-r1.yaml").read_text()
    (budgets / "bad.yaml").write_text(source.replace("mfu: 0.4", "mfu: 1.4"))
    config = tmp_path / "runledger.yaml"
    config.write_text(f"budgets: {budgets}\n")
    code, output = invoke("check", "--config", str(config))
    assert code == 2 and "bad.yaml" in output and "model.mfu" in output


def test_a_budget_number_the_warehouse_cannot_hold_exits_2_everywhere(demo: Path, tmp_path: Path) -> None:
    budgets = tmp_path / "budgets"
    budgets.mkdir()
    source = (demo.parent / ".runledger" / "demo" / "budgets" / "llm-7b-pt-r1.yaml").read_text()
    budget = budgets / "llm-7b-pt-r1.yaml"
    budget.write_text(source.replace("tokens: 6.5e+11", "tokens: 1.0e40"))
    config = tmp_path / "runledger.yaml"
    config.write_text(f"warehouse: {tmp_path / 'lake'}\nbudgets: {budgets}\nattribution: {{runs: runs.yaml}}\n")
    (tmp_path / "runs.yaml").write_text("runs:\n  - id: llm-7b-pt-r1\n")
    expected = (
        f"error: {budget}: model.tokens: must be below 10^15, the largest number RunLedger holds, got 1.0E+40; check "
        "its unit and exponent (docs/semantics.md#amounts) (the budget of 'llm-7b-pt-r1')"
    )
    for command in (["check", "--config", str(config)], ["estimate", str(budget)], ["run", "--config", str(config)]):
        code, output = invoke(*command)
        assert (code, [line for line in output.splitlines() if line.startswith("error:")]) == (2, [expected]), command
    assert not (tmp_path / "lake").exists()

    # numbers that fit but multiply past the range are named by the section that derives them
    budget.write_text(
        source.replace("parameters: 7.0e+9", "parameters: 9.0e+14")
        .replace("6.5e+11", "9.0e+14")
        .replace("gpu_peak_tflops: 989", "gpu_peak_tflops: 0.001")
    )
    code, output = invoke("estimate", str(budget))
    assert (code, output.strip()) == (
        2,
        (
            f"error: {budget}: model: the estimated GPU-hours is 3.712E+18, but RunLedger holds numbers below 10^15; "
            "check the numbers of this section for a wrong unit or exponent (docs/semantics.md#amounts) (the budget "
            "of 'llm-7b-pt-r1')"
        ),
    )


@pytest.mark.parametrize(
    ("weight", "problem"),
    [
        ("-1", "must be greater than 0, got -1"),
        ("0", "must be greater than 0, got 0"),
        ("0.000000000001", "must have at most 10 decimal places (the split counts weights in units of 1e-10), got"),
        ("1.0e+9", "must be at most 1000000 (weights are relative: scale them all down), got"),
    ],
    ids=["negative", "zero", "too precise", "too large"],
)
def test_a_registry_weight_out_of_range_exits_2_naming_file_entry_and_key(
    tmp_path: Path, weight: str, problem: str
) -> None:
    runs = tmp_path / "runs.yaml"
    runs.write_text(f"runs:\n  - id: main\n  - id: probe\n    resources: [i-eval]\n    weight: {weight}\n")
    config = tmp_path / "runledger.yaml"
    config.write_text(f"warehouse: {tmp_path / 'lake'}\nattribution: {{runs: runs.yaml}}\n")
    for command in ("check", "run"):
        code, output = invoke(command, "--config", str(config))
        assert code == 2, output
        assert f"error: {runs}: runs[1] (id probe).weight: Value error, {problem}" in output


def test_report_usage_errors(demo: Path) -> None:
    assert invoke("report", "--config", str(demo))[0] == 2
    code, output = invoke("report", "--config", str(demo), "--run", "no-such-run")
    assert code == 2 and "no-such-run" in output and "llm-7b-pt-r1" in output
    code, output = invoke("report", "--config", str(demo), "--run", "llm-13b-ft-r2", "--out", str(demo.parent / "one"))
    assert code == 0 and (demo.parent / "one" / "llm-13b-ft-r2" / "report.html").is_file()


def test_report_draws_pngs_on_demand_and_the_markdown_shows_them(demo: Path) -> None:
    out = demo.parent / "with-png"
    run = out / "llm-13b-ft-r2"
    code, output = invoke("report", "--config", str(demo), "--run", "llm-13b-ft-r2", "--out", str(out))
    assert code == 0 and "rendered 1 of 1 run reports, 0 unchanged" in output
    svgs = sorted(path.name for path in (run / "charts").iterdir())
    assert svgs and all(name.endswith(".svg") for name in svgs)
    assert "](charts/cumulative_spend.svg)" in (run / "report.md").read_text()

    code, output = invoke("report", "--config", str(demo), "--run", "llm-13b-ft-r2", "--out", str(out), "--png")
    assert code == 0 and "rendered 1 of 1 run reports, 0 unchanged" in output
    pngs = [run / "charts" / name.replace(".svg", ".png") for name in svgs]
    assert all(png.read_bytes().startswith(b"\x89PNG\r\n\x1a\n") for png in pngs)
    markdown = (run / "report.md").read_text()
    assert "](charts/cumulative_spend.png)" in markdown and ".svg)" not in markdown

    code, output = invoke("report", "--config", str(demo), "--run", "llm-13b-ft-r2", "--out", str(out))
    assert code == 0 and "rendered 1 of 1 run reports, 0 unchanged" in output
    assert sorted(path.name for path in (run / "charts").iterdir()) == svgs  # the PNGs removed again


def test_a_failed_load_exits_1_and_keeps_the_previous_data(demo: Path, tmp_path: Path) -> None:
    warehouse = lake_of(demo.parent)
    before = table_checksums(warehouse)
    manifest = next((demo.parent / ".runledger" / "demo" / "aws").rglob("BILLING_PERIOD=2026-11/*-Manifest.json"))
    original = manifest.read_text()
    document = json.loads(original)
    document["dataFiles"].append(document["dataFiles"][0].replace("00001", "00009"))
    manifest.write_text(json.dumps(document))
    try:
        code, output = invoke("run", "--config", str(demo), "--period", "2026-11")
    finally:
        manifest.write_text(original)
    assert code == 1
    assert str(manifest) in output and "cur2-demo-00009" in output
    assert table_checksums(warehouse) == before
    with reading(warehouse) as conn:
        status, error = conn.execute(
            "select status, error from loads where source_name = 'aws-main' order by started_at desc limit 1"
        ).fetchone()
    assert status == "failed" and "cur2-demo-00009" in error


def test_demo_refuses_to_overwrite_a_users_config(tmp_path: Path) -> None:
    (tmp_path / "runledger.yaml").write_text("warehouse: mine.duckdb\n")
    code, output = invoke("demo", "--dir", str(tmp_path))
    assert code == 2 and "is not the demo's" in output
    assert (tmp_path / "runledger.yaml").read_text() == "warehouse: mine.duckdb\n"


def test_check_names_a_budget_for_a_run_that_does_not_exist(demo: Path, tmp_path: Path) -> None:
    budgets = tmp_path / "budgets"
    budgets.mkdir()
    demo_budgets = demo.parent / ".runledger" / "demo" / "budgets"
    (budgets / "typo.yaml").write_text(
        (demo_budgets / "llm-7b-pt-r1.yaml").read_text().replace("llm-7b-pt-r1", "llm-7b-pt-rl")
    )
    (budgets / "spent.yaml").write_text((demo_budgets / "llm-13b-ft-r2.yaml").read_text())
    warehouse = lake_of(demo.parent)
    config = tmp_path / "runledger.yaml"
    config.write_text(f"warehouse: {warehouse.sqlite_file.parent}\nbudgets: {budgets}\n")

    code, output = invoke("check", "--config", str(config))

    # llm-13b-ft-r2 exists through its attributed spend; the typo exists nowhere
    assert code == 2
    assert output.strip().splitlines() == [
        (
            f"error: {budgets / 'typo.yaml'}: training_run: no run 'llm-7b-pt-rl': it is neither in a run "
            f"registry nor has spend attributed in {warehouse.describe()}; did you mean 'llm-7b-pt-r1'? fix the id, or "
            "register the run (`- id: llm-7b-pt-rl` under `runs:`)"
        ),
        "check: 1 problem found, nothing was run",
    ]

    (tmp_path / "runs.yaml").write_text("runs:\n  - id: llm-7b-pt-rl\n")
    config.write_text(f"warehouse: {tmp_path / 'not-built'}\nbudgets: {budgets}\nattribution: {{runs: runs.yaml}}\n")
    code, output = invoke("check", "--config", str(config))
    assert (
        code == 2
        and "no run 'llm-13b-ft-r2'" in output
        and f"the lake {tmp_path / 'not-built'} does not exist yet" in output
    )
    (tmp_path / "runs.yaml").write_text("runs:\n  - id: llm-7b-pt-rl\n  - id: llm-13b-ft-r2\n")
    code, output = invoke("check", "--config", str(config))
    assert code == 0, output


def warehouse_rows(demo: Path, sql: str, parameters: dict | None = None) -> list[tuple]:
    with reading(lake_of(demo.parent)) as conn:
        return conn.execute(sql, parameters or {}).fetchall()


def test_export_focus_writes_each_source_in_focus_order_with_the_warehouses_totals(demo: Path, tmp_path: Path) -> None:
    out = tmp_path / "focus"
    code, output = invoke("export", "focus", "--config", str(demo), "--period", "2026-11", "--out", str(out))
    assert code == 0, output
    assert sorted(path.name for path in out.iterdir()) == ["aws-main-2026-11.parquet", "gcp-main-2026-11.parquet"]

    table_columns = [row[0] for row in warehouse_rows(demo, "describe focus_line_items")]
    files = duckdb.connect()
    exported = files.execute(f"describe select * from read_parquet('{out}/aws-main-2026-11.parquet')").fetchall()
    names = [row[0] for row in exported]
    focus = [name for name in names if not name.startswith("x_")]
    # FOCUS columns first, in the specification's (alphabetical) order, then the extensions as the table has them
    assert names == focus + [name for name in table_columns if name.startswith("x_")]
    assert [focus_columns().index(name) for name in focus] == sorted(focus_columns().index(name) for name in focus)
    assert sorted(names) == sorted(table_columns) and names[:2] == ["AvailabilityZone", "BilledCost"]
    types = {row[0]: row[1] for row in exported}
    assert types["BilledCost"] == types["EffectiveCost"] == "DECIMAL(38,10)"
    assert types["ChargePeriodStart"] == "TIMESTAMP WITH TIME ZONE" and types["Tags"] == "VARCHAR"

    expected = warehouse_rows(
        demo,
        "select x_SourceName, count(*), sum(BilledCost), sum(EffectiveCost) from focus_line_items "
        "where BillingPeriodStart >= '2026-11-01' and BillingPeriodStart < '2026-12-01' group by all order by 1",
    )
    read = files.execute(
        f"select x_SourceName, count(*), sum(BilledCost), sum(EffectiveCost) from read_parquet('{out}/*.parquet') "
        "group by all order by 1"
    ).fetchall()
    assert read == expected and len(read) == 2
    for source, line_items, _, _ in expected:
        assert f"{out / f'{source}-2026-11.parquet'}  ({source}: {line_items:,} line items)" in output
    starts = warehouse_rows(demo, "select min(ChargePeriodStart) from focus_line_items where x_SourceName = 'gcp-main'")
    ((first_gcp_start,),) = files.execute(
        f"select min(ChargePeriodStart) from read_parquet('{out}/gcp-main-2026-11.parquet')"
    ).fetchall()
    assert first_gcp_start.utcoffset().total_seconds() == 0 and first_gcp_start.replace(tzinfo=None) >= starts[0][0]


def test_export_focus_writes_tags_as_json_objects_that_round_trip(demo: Path, tmp_path: Path) -> None:
    out = tmp_path / "focus"
    assert invoke("export", "focus", "--config", str(demo), "--period", "2026-10", "--out", str(out))[0] == 0
    tags = {
        key: json.loads(text) if text is not None else None
        for key, text in duckdb.connect()
        .execute(f"select x_LineItemKey, Tags from read_parquet('{out}/*.parquet')")
        .fetchall()
    }
    expected = dict(
        warehouse_rows(
            demo,
            "select x_LineItemKey, Tags from focus_line_items "
            "where BillingPeriodStart >= '2026-10-01' and BillingPeriodStart < '2026-11-01'",
        )
    )
    assert tags == expected
    assert sum(1 for value in tags.values() if value and value.get("user_training_run") == "llm-7b-pt-r1") > 100


def test_export_focus_csv_writes_plain_decimals_and_utc_timestamps(demo: Path, tmp_path: Path) -> None:
    out = tmp_path / "csv"
    code, output = invoke(
        "export", "focus", "--config", str(demo), "--period", "2026-11-01", "--out", str(out), "--format", "csv",
        "--source", "gcp-main",
    )  # fmt: skip
    assert code == 0, output
    path = out / "gcp-main-2026-11.csv"
    assert [p.name for p in out.iterdir()] == [path.name]
    with path.open(newline="") as file:
        rows = list(csv.DictReader(file))
    assert list(rows[0])[:3] == ["AvailabilityZone", "BilledCost", "BillingAccountId"]
    assert all(re.fullmatch(r"-?\d+\.\d{10}", row["BilledCost"]) for row in rows)
    assert all(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", row["ChargePeriodStart"]) for row in rows)
    ((billed, effective),) = warehouse_rows(
        demo,
        "select sum(BilledCost), sum(EffectiveCost) from focus_line_items "
        "where x_SourceName = 'gcp-main' and BillingPeriodStart >= '2026-11-01' and BillingPeriodStart < '2026-12-01'",
    )
    assert sum(Decimal(row["BilledCost"]) for row in rows) == billed
    assert sum(Decimal(row["EffectiveCost"]) for row in rows) == effective
    assert all(json.loads(row["Tags"]) is not None for row in rows if row["Tags"])


def test_export_focus_usage_errors_exit_2(demo: Path, tmp_path: Path) -> None:
    out = tmp_path / "focus"
    code, output = invoke("export", "focus", "--config", str(demo), "--period", "2026-12", "--out", str(out))
    assert (code, output.strip()) == (2, "error: no line items for billing period 2026-12 in the warehouse")
    code, output = invoke(
        "export", "focus", "--config", str(demo), "--period", "2026-11", "--out", str(out), "--source", "azure"
    )
    assert (code, output.strip()) == (
        2,
        "error: unknown billing source 'azure'; known billing sources (sources[].name): aws-main, gcp-main",
    )
    code, output = invoke("export", "focus", "--config", str(demo), "--period", "2026-13", "--out", str(out))
    assert code == 2 and "error: --period '2026-13' is not a billing period" in output
    assert (
        invoke("export", "focus", "--config", str(demo), "--period", "2026-11", "--out", str(out), "--format", "xls")[0]
        == 2
    )
    assert not out.exists()
