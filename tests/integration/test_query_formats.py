"""`runledger query`'s formats write money as plain decimal text: exact, never an exponent (`0E-10`),
the column's decimals in CSV and JSON (JSON strings), in cents and aligned on the decimal point in a
table, which escapes control characters. Rows stream from the confined child as it produces them,
and whatever stops the query (a closed pipe, a signal, `--timeout`) stops the child and removes
its spill folder."""

from __future__ import annotations

import csv
import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from pipelines.cli import main
from tests.support import REPO
from tests.support.demo_lake import SharedDemo, copy_demo
from tests.support.lake import writing

AMOUNTS = {
    "zero": "0",
    "negative": "-1234.5",
    "tiny": "0.0000000001",
    "huge": "12345678901234567890.1234567890",
}
AS_TEXT = {
    "zero": "0.0000000000",
    "negative": "-1234.5000000000",
    "tiny": "0.0000000001",
    "huge": "12345678901234567890.1234567890",
}
ORDERED = "select x_LineItemKey as line, BilledCost as cost from focus_line_items order by BilledCost"


@pytest.fixture
def config(tmp_path: Path) -> str:
    (tmp_path / "runledger.yaml").write_text("warehouse: lake\n")
    with writing(tmp_path) as conn:
        for key, amount in AMOUNTS.items():
            conn.execute(
                "insert into focus_line_items (x_LineItemKey, x_SourceName, x_SourceFormat, x_SourceFile, "
                "x_IngestedAt, x_CostCategory, x_GpuHours, BillingPeriodStart, BilledCost, x_Credits) values "
                "($key, 'gcp-main', 'gcp_billing', 'f', now(), 'compute', 0, timestamp '2026-11-01', "
                "$amount::decimal(38, 10), map {'CommittedUseDiscount': $amount::decimal(38, 10)})",
                {"key": key, "amount": amount},
            )
    return str(tmp_path / "runledger.yaml")


def query(config: str, sql: str, output_format: str = "table") -> str:
    result = CliRunner().invoke(main, ["query", "--config", config, "--format", output_format, sql])
    assert result.exit_code == 0, result.output
    return result.output


def test_csv_writes_every_decimal_of_the_column_exactly(config: str) -> None:
    sql = "select x_LineItemKey as line, BilledCost as cost, x_Credits from focus_line_items order by cost"
    rows = list(csv.reader(io.StringIO(query(config, sql, "csv"))))
    assert rows[0] == ["line", "cost", "x_Credits"]
    assert [(line, cost) for line, cost, _ in rows[1:]] == [
        (key, AS_TEXT[key]) for key in ("negative", "zero", "tiny", "huge")
    ]
    credits = {line: json.loads(text) for line, _, text in rows[1:]}
    assert credits["zero"] == {"CommittedUseDiscount": "0.0000000000"}
    assert credits["huge"] == {"CommittedUseDiscount": AS_TEXT["huge"]}


def test_json_writes_decimals_as_strings_of_the_exact_amount_and_integers_as_numbers(config: str) -> None:
    sql = (
        "select x_LineItemKey as line, BilledCost as cost, 7 as n, sum(BilledCost) over () as total "
        "from focus_line_items order by cost"
    )
    rows = json.loads(query(config, sql, "json"))
    # -1234.5 + 0 + 0.0000000001 + 12345678901234567890.1234567890, to the last decimal
    assert rows == [
        {"line": key, "cost": AS_TEXT[key], "n": 7, "total": "12345678901234566655.6234567891"}
        for key in ("negative", "zero", "tiny", "huge")
    ]


def test_a_table_shows_money_in_cents_aligned_on_the_decimal_point(config: str) -> None:
    assert query(config, ORDERED).splitlines() == [
        "line                               cost",
        "--------  -----------------------------",
        "negative                      -1,234.50",
        "zero                               0.00",
        "tiny                               0.00",
        "huge      12,345,678,901,234,567,890.12",
    ]
    # a half rounds away from zero, as the reports round; a column of fractions (all within -1..1:
    # shares, unit prices) keeps every decimal it needs; whole numbers (a sum of integers) show none
    sql = (
        "select 2.665::decimal(38, 10) as cost, (-0.001)::decimal(38, 10) as credit, "
        "0.0000123::decimal(38, 10) as unit_price, 1::decimal(38, 10) as share, 12069::hugeint as n "
        "union all select -0.005, 5, 0.25, 0.5, 1"
    )
    assert query(config, sql).splitlines() == [
        " cost  credit  unit_price  share       n",
        "-----  ------  ----------  -----  ------",
        " 2.67    0.00   0.0000123   1.00  12,069",
        "-0.01    5.00   0.2500000   0.50       1",
    ]
    csv_rows = list(csv.reader(io.StringIO(query(config, sql, "csv"))))
    assert csv_rows[1:] == [
        ["2.6650000000", "-0.0010000000", "0.0000123000", "1.0000000000", "12069"],
        ["-0.0050000000", "5.0000000000", "0.2500000000", "0.5000000000", "1"],
    ]


ESCAPES = (
    "select chr(27) || '[31mred' || chr(27) || '[0m' as run, 'a' || chr(10) || 'b' as tag, "
    "chr(27) || ']0;title' || chr(7) || chr(155) as \"c\x1bol\""
)


def test_a_table_escapes_control_characters_and_csv_and_json_keep_them_exact(config: str) -> None:
    assert query(config, ESCAPES).splitlines() == [
        "run                 tag   c\\x1bol",
        "------------------  ----  --------------------",
        "\\x1b[31mred\\x1b[0m  a\\nb  \\x1b]0;title\\x07\\x9b",
    ]
    assert list(csv.reader(io.StringIO(query(config, ESCAPES, "csv"), newline=""))) == [
        ["run", "tag", "c\x1bol"],
        ["\x1b[31mred\x1b[0m", "a\nb", "\x1b]0;title\x07\x9b"],
    ]
    assert json.loads(query(config, ESCAPES, "json")) == [
        {"run": "\x1b[31mred\x1b[0m", "tag": "a\nb", "c\x1bol": "\x1b]0;title\x07\x9b"}
    ]


def test_the_summary_tables_come_back_in_their_natural_order(shared_demo: SharedDemo) -> None:
    def rows(sql: str) -> list[list[str]]:
        return list(csv.reader(io.StringIO(query(str(shared_demo.config), sql, "csv"))))[1:]

    run_costs = rows("select training_run, billing_period, cost_category, currency from run_costs")
    assert len(run_costs) > 20 and run_costs == sorted(run_costs)
    variance = rows("select training_run, cost_category from budget_variance")
    assert variance == sorted(variance, key=lambda row: (row[0], row[1] == "total", row[1]))
    assert variance[-1] == ["llm-7b-pt-r1", "total"]


RUNLEDGER = str(Path(sys.executable).with_name("runledger"))
# a query that runs for hours, producing no row
SLOW = "select count(*) from range(1000000000000000) t(i) where hash(i) = 0"


def _start(config: Path, tmp: Path, *args: str) -> subprocess.Popen:
    """`runledger query` in a process of its own, its temporary files under `tmp`."""
    return subprocess.Popen(
        [RUNLEDGER, "query", "--config", str(config), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "TMPDIR": str(tmp)},
    )


def _children(pid: int) -> list[int]:
    children = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            parent = int(stat.read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError):
            continue
        if parent == pid:
            children.append(int(stat.parent.name))
    return children


def _running_child(process: subprocess.Popen, tmp: Path) -> int | None:
    """The query's child once it runs and its spill folder exists; None when the query ended first."""
    while process.poll() is None:
        children = _children(process.pid)
        if children and list(tmp.glob("runledger-query-*")):
            return children[0]
        time.sleep(0.05)
    return None


def test_rows_stream_and_a_closed_pipe_ends_the_query_quietly(shared_demo: SharedDemo, tmp_path: Path) -> None:
    # `| head -1` on a result of a hundred million rows: the first line arrives while the child is
    # still producing the rest; closing the pipe is no error, and stops the child
    process = _start(shared_demo.config, tmp_path, "--format", "csv", "select i from range(100000000) t(i)")
    first = process.stdout.readline()
    children = _children(process.pid)
    process.stdout.close()
    assert (first, process.wait(), process.stderr.read()) == (b"i\r\n", 0, b"")
    process.stderr.close()
    assert children and not any(Path(f"/proc/{child}").exists() for child in children)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
def test_a_signal_stops_the_query_its_child_and_removes_the_spill_folder(
    shared_demo: SharedDemo, tmp_path: Path, signum: int
) -> None:
    process = _start(shared_demo.config, tmp_path, SLOW)
    child = _running_child(process, tmp_path)
    assert child is not None
    process.send_signal(signum)
    _, stderr = process.communicate()
    assert (process.returncode, stderr) == (128 + signum, b"")
    assert not Path(f"/proc/{child}").exists()
    assert list(tmp_path.iterdir()) == []


def test_a_query_past_its_timeout_stops_with_exit_2(shared_demo: SharedDemo, tmp_path: Path) -> None:
    process = _start(shared_demo.config, tmp_path, "--timeout", "2", SLOW)
    child = _running_child(process, tmp_path)
    _, stderr = process.communicate()
    assert (process.returncode, stderr.decode()) == (
        2,
        (
            "error: the query ran past --timeout 2 s and was stopped: narrow it (a where, a limit) or give a "
            "longer --timeout (0: no limit)\n"
        ),
    )
    assert child is None or not Path(f"/proc/{child}").exists()
    assert list(tmp_path.iterdir()) == []


# Each Python process started with this folder first on its path (the command and the query's
# confined child) appends, as it exits, its program's name and the heavy modules it imported; the
# file is opened as the process starts, before the child's sandbox would refuse to open it.
SITE_PROBE = """
import atexit, json, os, sys

HEAVY = ("dagster", "polars", "pyarrow", "google.cloud.bigquery", "pipelines.reports.writer")
_record = open(os.environ["RUNLEDGER_IMPORTS_PROBE"], "a")


def _report():
    program = os.path.basename(sys.argv[0])
    _record.write(json.dumps([program, sorted(m for m in HEAVY if m in sys.modules)]) + "\\n")
    _record.close()


atexit.register(_report)
"""


def _imports(config: Path, tmp_path: Path, *args: str) -> list[list]:
    """The exit code of `runledger <args> --config config`, then what each of its processes
    imported, in the order they ended."""
    probe_dir, record = tmp_path / "probe", tmp_path / "imports.jsonl"
    probe_dir.mkdir(exist_ok=True)
    (probe_dir / "sitecustomize.py").write_text(SITE_PROBE)
    record.unlink(missing_ok=True)
    done = subprocess.run(
        [RUNLEDGER, *args, "--config", str(config)],
        env={**os.environ, "PYTHONPATH": f"{probe_dir}:{REPO}", "RUNLEDGER_IMPORTS_PROBE": str(record)},
        capture_output=True,
        check=False,
    )
    return [done.returncode, *(json.loads(line) for line in record.read_text().splitlines())]


def test_query_and_its_confined_reader_import_no_arrow_polars_or_dagster(
    shared_demo: SharedDemo, tmp_path: Path
) -> None:
    assert _imports(shared_demo.config, tmp_path, "query", "select * from run_costs") == [
        0,
        ["query.py", []],
        ["runledger", []],
    ]


def test_report_of_an_unchanged_run_and_check_import_neither_the_renderer_nor_dagster(
    shared_demo: SharedDemo, tmp_path: Path
) -> None:
    config = copy_demo(shared_demo, tmp_path / "project")
    report = ["report", "--run", "llm-7b-pt-r1"]
    assert _imports(config, tmp_path, *report)[0] == 0  # the report set of this one run written
    assert _imports(config, tmp_path, *report) == [0, ["runledger", []]]
    # the demo's billing sources are files listed with polars (GCP) and Arrow, never BigQuery's client
    assert _imports(config, tmp_path, "check") == [0, ["runledger", ["polars", "pyarrow"]]]
