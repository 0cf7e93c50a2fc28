"""Fault injection: each bad input fails with its exit code and one message naming
the input and what to do, and leaves every table of the warehouse exactly as it was."""

from __future__ import annotations

import csv
import gzip
import io
import json
import os
import re
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, date, datetime
from decimal import Decimal
from pathlib import Path

import pytest
from click.testing import CliRunner

from pipelines.cli import main
from pipelines.sources import delivery, focus_files
from pipelines.warehouse.lake import Lake
from pipelines.warehouse.sql import read_sql_file
from tests.support import FIXTURES, write_config
from tests.support.cur_exports import FolderSink, cur2_table, lines, parquet_bytes, period_totals, write_cur2_delivery
from tests.support.lake import lake_of, reading
from tests.support.warehouse_state import table_checksums
from tests.unit.test_gcp_mapping import row as gcp_row

SAMPLE = FIXTURES / "focus_1.0_sample_1000.csv"
EXPORT = "exports/focus.csv"


def invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.output


def sample_rows() -> tuple[list[str], list[dict[str, str]]]:
    with SAMPLE.open(newline="") as handle:
        reader = csv.DictReader(handle)
        return list(reader.fieldnames or []), list(reader)


def write_export(path: Path, header: list[str], rows: list[dict[str, str]]) -> None:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, header, extrasaction="ignore", quoting=csv.QUOTE_ALL, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    path.write_text(buffer.getvalue())


@pytest.fixture(scope="module")
def loaded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder with the FOCUS sample as its one export, loaded once."""
    root = tmp_path_factory.mktemp("loaded")
    (root / "exports").mkdir()
    shutil.copy(SAMPLE, root / EXPORT)
    config = write_config(root, "sources:\n  - {name: focus-files, kind: focus, path: exports}\n")
    code, output = invoke("run", "--config", str(config))
    assert code == 0, output
    return root


@pytest.fixture
def site(loaded: Path, tmp_path: Path) -> Path:
    """A private copy of the loaded folder; returns its `runledger.yaml`."""
    shutil.copytree(loaded, tmp_path / "site")
    return tmp_path / "site" / "runledger.yaml"


def warehouse_of(config: Path) -> Lake:
    return lake_of(config.parent)


def last_load(config: Path) -> tuple[str, str | None]:
    with reading(warehouse_of(config)) as conn:
        return conn.execute(
            "select status, error from loads order by started_at desc, finished_at desc limit 1"
        ).fetchone()


def run_refused(config: Path, expected_code: int = 1) -> str:
    """Runs the nightly job on a faulty input: it fails with `expected_code` and leaves every
    table as it was; returns the output."""
    before = table_checksums(warehouse_of(config))
    code, output = invoke("run", "--config", str(config))
    assert code == expected_code, output
    assert table_checksums(warehouse_of(config)) == before
    return output


def with_first_row(config: Path, column: str, value: str) -> Path:
    header, rows = sample_rows()
    rows[0][column] = value
    export = config.parent / EXPORT
    write_export(export, header, rows)
    return export


@pytest.mark.parametrize("value", ["12,5 USD", "NaN", "inf", "-Infinity", "1e18", "-1000000000000000"])
def test_a_cost_that_is_not_a_finite_number_stops_the_load(site: Path, value: str) -> None:
    export = with_first_row(site, "BilledCost", value)
    output = run_refused(site)
    assert output.count("run failed:") == 1
    assert str(export) in output
    assert f"row 1, column BilledCost: {value!r} is not a finite number below 10^15; fix or re-export" in output
    assert last_load(site)[0] == "failed"


def test_a_timestamp_in_another_format_stops_the_load(site: Path) -> None:
    export = with_first_row(site, "ChargePeriodStart", "18/09/2024 22:00")
    output = run_refused(site)
    assert str(export) in output and "row 1, column ChargePeriodStart: '18/09/2024 22:00' is not a timestamp" in output


def test_a_missing_cost_column_stops_the_load(site: Path) -> None:
    header, rows = sample_rows()
    export = site.parent / EXPORT
    write_export(export, [c for c in header if c != "EffectiveCost"], rows)
    output = run_refused(site)
    assert output.strip().splitlines()[-1] == f"run failed: {export}: FOCUS columns missing: EffectiveCost"


def test_an_extra_column_is_loaded_and_reported_by_the_drift_check(site: Path) -> None:
    header, rows = sample_rows()
    for row in rows:
        row["SurpriseColumn"] = "1"
    write_export(site.parent / EXPORT, [*header, "SurpriseColumn"], rows)
    before = table_checksums(warehouse_of(site))
    code, output = invoke("run", "--config", str(site))
    assert code == 0, output
    assert "warning:" in output and "SurpriseColumn" in output
    # same rows and costs: only the ingestion time of the reloaded rows differs; the new column is kept
    with reading(warehouse_of(site)) as conn:
        assert conn.execute("select count(*) from focus_line_items").fetchone()[0] == before["focus_line_items"][0]
        kept = conn.execute(
            "select x_ExtraColumns['SurpriseColumn'], count(*) from focus_line_items group by 1"
        ).fetchall()
    assert kept == [("1", len(rows))]


def test_a_corrupt_parquet_file_stops_the_load(site: Path) -> None:
    bad = site.parent / "exports" / "part-2.parquet"
    bad.write_bytes(b"PAR1" + b"\x00garbage" * 20)
    output = run_refused(site)
    assert f"cannot read FOCUS file {bad}" in output


def test_a_truncated_parquet_file_stops_the_load(site: Path) -> None:
    import polars as pl

    good = site.parent / "exports" / "part-2.parquet"
    pl.read_csv(SAMPLE, infer_schema=False).write_parquet(good)
    good.write_bytes(good.read_bytes()[: good.stat().st_size // 2])
    output = run_refused(site)
    assert f"cannot read FOCUS file {good}" in output


def line_items_without_ingestion_time(config: Path) -> tuple:
    with reading(warehouse_of(config)) as conn:
        return conn.execute(
            "select count(*), sum(hash(columns(* exclude (x_IngestedAt)))) from focus_line_items"
        ).fetchone()


def test_the_same_files_twice_reload_to_the_same_rows(site: Path) -> None:
    # local FOCUS files carry no delivery id: the period is replaced by identical rows (AWS
    # deliveries already loaded are skipped, see tests/test_aws_s3_exports.py)
    assert invoke("run", "--config", str(site))[0] == 0  # the copy's rows name the copy's files
    before = line_items_without_ingestion_time(site)
    code, output = invoke("run", "--config", str(site))
    assert code == 0, output
    assert line_items_without_ingestion_time(site) == before


def test_config_that_is_not_yaml_exits_2_naming_the_file(site: Path) -> None:
    site.write_text("sources: [\n  - {name: x\n")
    code, output = invoke("run", "--config", str(site))
    assert code == 2 and str(site) in output and output.startswith("error: ")


HOLD_THE_LOCK = """
import sys, time
from pathlib import Path
from pipelines.config import load_config
from pipelines.warehouse.locks import writer_lock
with writer_lock(load_config(Path(sys.argv[1])).lake):
    print("held", flush=True)
    time.sleep(120)
"""


@contextmanager
def writer_lock_held_by_another_process(config: Path) -> Iterator[subprocess.Popen]:
    """A real second process holding the lake's writers' lock; yields it, killed afterwards."""
    holder = subprocess.Popen([sys.executable, "-c", HOLD_THE_LOCK, str(config)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        yield holder
    finally:
        holder.kill()
        holder.wait()


def test_a_second_writer_waits_for_the_first_and_both_succeed(site: Path) -> None:
    warehouse = warehouse_of(site)
    with writer_lock_held_by_another_process(site) as holder:
        before = table_checksums(warehouse, with_journal=True)
        second = subprocess.Popen(
            [str(Path(sys.executable).with_name("runledger")), "run", "--config", str(site)],
            stderr=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        lines = [second.stderr.readline()]
        while "waiting for" not in lines[-1] and lines[-1]:
            lines.append(second.stderr.readline())
        waiting = f"waiting for the writer holding {warehouse.state_dir / 'lake.lock'} (pid {holder.pid})"
        assert any(line.startswith(waiting) for line in lines), lines
        # readers still read meanwhile, and the waiting run wrote nothing
        assert table_checksums(warehouse, with_journal=True) == before
        holder.kill()
        holder.wait()
        _, errors = second.communicate(timeout=300)
    assert second.returncode == 0, errors
    assert "taken after" in "".join(lines) + errors and "reconciliation:" in errors


def first_row_billed_cost(config: Path) -> Decimal:
    with reading(warehouse_of(config)) as conn:
        return conn.execute("select BilledCost from focus_line_items where x_LineItemKey like '%|0'").fetchone()[0]


def fail_at(statement: tuple[Path, str], failure: Callable[[], None]) -> Callable[..., str]:
    """`read_sql_file` that calls `failure` when the load asks for `statement` (inside its transaction)."""

    def read(file: Path, name: str | None = None) -> str:
        if (file, name) == statement:
            failure()
        return read_sql_file(file, name)

    return read


def test_a_load_interrupted_after_the_delete_keeps_the_period_and_the_next_run_completes_it(
    site: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def interrupt() -> None:
        raise RuntimeError("injected fault after the delete")

    with_first_row(site, "BilledCost", "1234.5")
    with monkeypatch.context() as patch:
        patch.setattr(delivery, "read_sql_file", fail_at((focus_files.MAPPING.sql, "insert"), interrupt))
        output = run_refused(site)
    assert "injected fault after the delete" in output
    assert last_load(site) == ("failed", "injected fault after the delete")

    code, output = invoke("run", "--config", str(site))
    assert code == 0, output
    assert first_row_billed_cost(site) == Decimal("1234.5")


KILLED_MID_LOAD = """
import os, signal, sys
from pipelines.cli import main
from pipelines.sources import delivery, focus_files
from pipelines.warehouse.sql import read_sql_file
from pipelines.warehouse.lake import Lake
from tests.support.lake import lake_of, reading

def read(file, name=None):
    if (file, name) == (focus_files.MAPPING.sql, "insert"):
        os.kill(os.getpid(), signal.SIGKILL)
    return read_sql_file(file, name)

delivery.read_sql_file = read
main(["run", "--config", sys.argv[1]])
"""


def test_a_run_killed_inside_the_load_transaction_leaves_the_warehouse_intact(site: Path) -> None:
    with_first_row(site, "BilledCost", "1234.5")
    before = table_checksums(warehouse_of(site), with_journal=True)
    killed = subprocess.run([sys.executable, "-c", KILLED_MID_LOAD, str(site)], capture_output=True, timeout=120)
    assert killed.returncode == -signal.SIGKILL
    assert table_checksums(warehouse_of(site), with_journal=True) == before

    code, output = invoke("run", "--config", str(site))  # the dead process's lock went with it
    assert code == 0, output
    assert first_row_billed_cost(site) == Decimal("1234.5")


SECRET = "FAKEsecretKEY/9f8e7d6c5b4a3+never-in-an-output"


def test_secrets_in_the_environment_reach_no_output_log_metadata_or_report(site: Path, tmp_path: Path) -> None:
    dagster_home = tmp_path / "dagster"
    dagster_home.mkdir()
    env = {
        **os.environ,
        "AWS_ACCESS_KEY_ID": "AKIAFAKEFAKEFAKE",
        "AWS_SECRET_ACCESS_KEY": SECRET,
        "GOOGLE_APPLICATION_CREDENTIALS": str(tmp_path / "creds.json"),
        "DAGSTER_HOME": str(dagster_home),
    }
    (tmp_path / "creds.json").write_text(json.dumps({"type": "service_account", "private_key": SECRET}))
    runledger = str(Path(sys.executable).with_name("runledger"))
    ok = subprocess.run([runledger, "run", "--config", str(site)], capture_output=True, text=True, env=env, timeout=300)
    assert ok.returncode == 0, ok.stderr
    with_first_row(site, "BilledCost", "NaN")
    failed = subprocess.run(
        [runledger, "run", "--config", str(site)], capture_output=True, text=True, env=env, timeout=300
    )
    assert failed.returncode == 1 and "is not a finite number" in failed.stderr

    outputs = [ok.stdout, ok.stderr, failed.stdout, failed.stderr]
    files = [f for folder in (site.parent, dagster_home) for f in folder.rglob("*") if f.is_file()]
    assert any(f.suffix == ".db" for f in dagster_home.rglob("*"))  # the Dagster event log and metadata were written
    assert [text for text in outputs if SECRET in text] == []
    assert [f for f in files if SECRET.encode() in f.read_bytes()] == []
    with reading(warehouse_of(site)) as conn:  # DuckDB may compress text on disk
        errors = conn.execute("select error from loads where status = 'failed'").fetchall()
    assert errors and not [e for (e,) in errors if SECRET in e]


def test_two_currencies_in_one_period_stop_the_load(site: Path) -> None:
    with_first_row(site, "BillingCurrency", "EUR")
    output = run_refused(site)
    assert output.strip().splitlines()[-1] == (
        "run failed: source focus-files, billing period 2024-09: rows in several currencies (EUR,USD); "
        "one currency per period is supported"
    )


HOSTILE = "r1'); drop table focus_line_items; -- select ' ; 🚀 " + "x" * 10_240


def test_hostile_tag_values_are_loaded_and_attributed_as_data(site: Path) -> None:
    with_first_row(site, "Tags", json.dumps({"training_run": HOSTILE}, ensure_ascii=False))
    code, output = invoke("run", "--config", str(site))
    assert code == 0, output
    with reading(warehouse_of(site)) as conn:
        rows = conn.execute("select count(*) from focus_line_items").fetchone()[0]
        runs = conn.execute(
            "select training_run, count(*) from cost_allocations where training_run is not null group by 1"
        ).fetchall()
    assert rows == 1000
    assert runs == [(HOSTILE, 1)]


@pytest.mark.parametrize(
    ("tags", "kept", "run"),
    [
        (
            '{"training_run": 7, "fleet_size": 500, "spot": true, "note": null}',
            {"training_run": "7", "fleet_size": "500", "spot": "true", "note": None},
            "7",
        ),
        (
            '{"training_run": "caf\\u00e9-\\"r1\\"", "fleet_size": 5.0e2, "spot": false, "n\\u00f8te": null}',
            {"training_run": 'café-"r1"', "fleet_size": "5.0e2", "spot": "false", "nøte": None},
            'café-"r1"',
        ),
    ],
)
def test_every_tag_is_kept_as_its_text_and_a_run_tag_attributes(
    site: Path, tags: str, kept: dict[str, str | None], run: str
) -> None:
    # keys and strings unescaped, numbers as written, a null value a key with a NULL value
    with_first_row(site, "Tags", tags)
    code, output = invoke("run", "--config", str(site))
    assert code == 0, output
    with reading(warehouse_of(site)) as conn:
        (loaded,) = conn.execute("select Tags from focus_line_items where x_LineItemKey like '%|0'").fetchone()
        runs = conn.execute(
            "select training_run, count(*) from cost_allocations where training_run is not null group by 1"
        ).fetchall()
    assert loaded == kept
    assert runs == [(run, 1)]


@pytest.mark.parametrize("export_format", ["csv", "parquet"])
@pytest.mark.parametrize(
    "tags",
    ['{"training_run": "llm-7b-pt-r1"', "training_run=llm-7b-pt-r1", '{"training_run": ["llm-7b-pt-r1"]}'],
)
def test_tags_that_are_not_a_json_object_stop_the_load(site: Path, export_format: str, tags: str) -> None:
    # A run tag the load cannot read is not dropped silently: the load names the file and row.
    header, rows = sample_rows()
    rows[2]["Tags"] = tags
    export = site.parent / EXPORT
    write_export(export, header, rows)
    if export_format == "parquet":
        import polars as pl

        parquet = export.with_suffix(".parquet")
        pl.read_csv(export, infer_schema=False, null_values=["NULL"]).write_parquet(parquet)
        export.unlink()
        export = parquet
    output = run_refused(site)
    assert output.strip().splitlines()[-1] == (
        f"run failed: {export}, row 3, column Tags: {tags!r} is not a JSON object of tags "
        '(e.g. {"training_run": "llm-7b-pt-r1"}); fix or re-export the file, nothing was loaded'
    )
    assert last_load(site)[0] == "failed"


@pytest.mark.parametrize(
    ("column", "value", "message"),
    [
        ("Tags", '{"training_run": "r1", "training_run": "r2"}', "repeats the key 'training_run'"),
        (
            "SkuPriceDetails",
            '{"InstanceType": ["p5"]}',
            'is not a JSON object of SKU price properties (e.g. {"InstanceType": "p5.48xlarge"})',
        ),
    ],
)
def test_key_value_text_that_focus_does_not_allow_stops_the_load(
    site: Path, column: str, value: str, message: str
) -> None:
    header, rows = sample_rows()
    rows[4][column] = value
    export = site.parent / EXPORT
    write_export(export, [*header, *([column] if column not in header else [])], rows)
    output = run_refused(site)
    assert output.strip().splitlines()[-1] == (
        f"run failed: {export}, row 5, column {column}: {value!r} {message}; "
        "fix or re-export the file, nothing was loaded"
    )


@pytest.mark.parametrize("file", ["runs.yaml", "budgets/bad.yaml"])
def test_registry_or_budget_that_is_not_yaml_exits_2_naming_the_file(site: Path, file: str) -> None:
    (site.parent / "budgets").mkdir()
    (site.parent / "runs.yaml").write_text("runs:\n  - id: r1\n")
    (site.parent / file).write_text("runs: [\n  - {id: x\n")
    site.write_text(site.read_text() + "attribution: {runs: runs.yaml}\nbudgets: budgets\n")
    before = table_checksums(warehouse_of(site), with_journal=True)
    code, output = invoke("run", "--config", str(site))
    last_line = output.strip().splitlines()[-1]
    assert code == 2 and last_line.startswith(f"error: {site.parent / file}: not valid YAML")
    assert table_checksums(warehouse_of(site), with_journal=True) == before


def test_a_charge_period_ending_before_it_starts_stops_the_load(site: Path) -> None:
    header, rows = sample_rows()
    rows[4]["ChargePeriodEnd"] = "2024-09-21 23:00:00"  # its start: 2024-09-22 00:00:00
    export = site.parent / EXPORT
    write_export(export, header, rows)
    output = run_refused(site)
    assert output.strip().splitlines()[-1] == (
        f"run failed: {export}, row 5, column ChargePeriodEnd: '2024-09-21 23:00:00' is before ChargePeriodStart "
        "'2024-09-22 00:00:00'; fix or re-export the file, nothing was loaded"
    )


def test_a_manifest_that_is_not_json_stops_the_load(tmp_path: Path) -> None:
    from tests.integration.test_legacy_cur_sample import lay_out_sample

    config = lay_out_sample(tmp_path, "gz")
    code, output = invoke("run", "--config", str(config))
    assert code == 0, output
    manifest = next((tmp_path / "cur").rglob("*-Manifest.json"))
    manifest.write_text('{"assemblyId": "5f3c2b1a", "reportKeys": [')
    output = run_refused(config)
    assert output.count("run failed:") == 1 and f"{manifest}" in output and "JSON" in output
    assert last_load(config)[0] == "failed"


OCTOBER = date(2026, 10, 1)


@pytest.fixture
def aws_site(tmp_path: Path) -> tuple[Path, FolderSink]:
    """A CUR 2.0 export in a local folder with October loaded: two files, 4 lines, 40.00."""
    sink = FolderSink(tmp_path / "exports")
    write_cur2_delivery(
        sink, "cur", "c2", OCTOBER, "exec-1", [lines(OCTOBER, "a", ["1", "2"]), lines(OCTOBER, "b", ["3", "34"])]
    )
    config = write_config(tmp_path, "sources:\n  - {name: aws, kind: aws_cur, uri: exports/cur/c2}\n")
    code, output = invoke("run", "--config", str(config))
    assert code == 0, output
    assert period_totals(warehouse_of(config)) == {"2026-10": (4, Decimal(40))}
    return config, sink


def test_a_cur2_file_without_its_cost_column_stops_the_load(aws_site: tuple[Path, FolderSink]) -> None:
    # Read together, the second file's costs would come back NULL, and its lines at zero cost.
    config, sink = aws_site
    keys = write_cur2_delivery(
        sink, "cur", "c2", OCTOBER, "exec-2", [lines(OCTOBER, "c", ["5"]), lines(OCTOBER, "d", ["6"])]
    )
    without_cost = cur2_table(lines(OCTOBER, "d", ["6"])).drop(["line_item_unblended_cost"])
    sink.put(keys[1], parquet_bytes(without_cost))
    output = run_refused(config)
    assert output.strip().splitlines()[-1] == (
        f"run failed: {sink.root / keys[1]}: CUR 2.0 columns missing: line_item_unblended_cost"
    )
    assert period_totals(warehouse_of(config)) == {"2026-10": (4, Decimal(40))}


def test_an_empty_delivery_keeps_the_period_loaded_before(aws_site: tuple[Path, FolderSink]) -> None:
    config, sink = aws_site
    keys = write_cur2_delivery(sink, "cur", "c2", OCTOBER, "exec-2", [lines(OCTOBER, "c", ["5"])])
    sink.put(keys[0], parquet_bytes(cur2_table(lines(OCTOBER, "c", ["5"])).slice(0, 0)))
    output = run_refused(config)
    assert (
        output.strip()
        .splitlines()[-1]
        .startswith(
            f"run failed: {sink.root / keys[0]}: the file holds no line items (a schema and no rows); nothing was "
            "loaded, the rows loaded before are kept"
        )
    )
    assert last_load(config)[0] == "failed"
    assert period_totals(warehouse_of(config)) == {"2026-10": (4, Decimal(40))}


def test_a_renamed_cost_column_is_named_in_the_error(site: Path) -> None:
    header, rows = sample_rows()
    for row in rows:
        row["EffectiveCostUSD"] = row.pop("EffectiveCost")
    export = site.parent / EXPORT
    write_export(export, [c if c != "EffectiveCost" else "EffectiveCostUSD" for c in header], rows)
    output = run_refused(site)
    assert output.strip().splitlines()[-1] == (
        f"run failed: {export}: FOCUS columns missing: EffectiveCost; the file has 'EffectiveCostUSD' "
        "(renamed 'EffectiveCost'?): rename the column back or re-export the data"
    )


def test_a_renamed_column_in_a_legacy_cur_csv(tmp_path: Path) -> None:
    from tests.integration.test_legacy_cur_sample import lay_out_sample

    config = lay_out_sample(tmp_path, "gz")
    code, output = invoke("run", "--config", str(config))
    assert code == 0, output
    report = next((tmp_path / "cur").rglob("*.csv.gz"))
    header, _, body = gzip.decompress(report.read_bytes()).decode().partition("\n")

    # a column the mapping reads but can do without: loaded, reported by the drift check
    assert "lineItem/UsageType," in header
    renamed = header.replace("lineItem/UsageType,", "lineItem/UsageTypeV2,")
    report.write_bytes(gzip.compress(f"{renamed}\n{body}".encode()))
    code, output = invoke("run", "--config", str(config))
    assert code == 0, output
    drift = next(line for line in output.splitlines() if "schema_drift" in line)
    assert re.match(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ   warning: raw/aws_legacy.schema_drift: missing: ", drift)
    assert "line_item_usage_type" in drift

    # the cost column: the load stops, naming the column it found instead
    renamed = header.replace("lineItem/UnblendedCost", "lineItem/UnblendedCosts")
    report.write_bytes(gzip.compress(f"{renamed}\n{body}".encode()))
    output = run_refused(config)
    assert output.strip().splitlines()[-1] == (
        f"run failed: {report}: legacy CUR columns missing: line_item_unblended_cost; the file has "
        "'lineItem/UnblendedCosts' (renamed 'line_item_unblended_cost'?): rename the column back or re-export the data"
    )


def test_a_bad_run_event_line_exits_1_naming_file_and_line_and_keeps_the_events(site: Path) -> None:
    events = site.parent / "events"
    events.mkdir()
    good = '{"training_run": "r1", "time": "2026-10-05T00:00:00Z", "event": "start", "step": 0, "gpus": 8}\n'
    (events / "r1.jsonl").write_text(good)
    site.write_text(site.read_text() + "  - {name: run-log, kind: run_events, path: events}\n")
    code, output = invoke("run", "--config", str(site))
    assert code == 0, output
    (events / "r2.jsonl").write_text(
        good.replace("r1", "r2") + good.replace("r1", "r2").replace("00:00:00Z", "01:00:00")
    )
    output = run_refused(site)
    assert f"{events / 'r2.jsonl'}:2: time: '2026-10-05T01:00:00' has no UTC offset" in output
    with reading(warehouse_of(site)) as conn:
        assert conn.execute("select training_run, origin from run_events").fetchall() == [
            ("r1", f"{events / 'r1.jsonl'}:1")
        ]


@pytest.mark.parametrize(
    ("cost", "problem"),
    [
        (float("nan"), "row 2, column line_item_unblended_cost: 'nan' is not a finite number below 10^15"),
        (1e30, "row 2, column line_item_unblended_cost: '1e+30' is not a finite number below 10^15"),
        # DECIMAL(38, 10) holds 1e18, but not its shares and exact divisions: found in the load's
        # transaction (the Parquet amounts are checked row by row only when the totals fail)
        (
            1e18,
            (
                "line item aws|2026-10|exec-2|2, column BilledCost: 1000000000000000000.0000000000 is not below 10^15, "
                "the largest amount RunLedger loads (docs/semantics.md#amounts)"
            ),
        ),
    ],
)
def test_a_cur2_cost_out_of_range_names_the_file_row_and_column(
    aws_site: tuple[Path, FolderSink], cost: float, problem: str
) -> None:
    config, sink = aws_site
    keys = write_cur2_delivery(
        sink, "cur", "c2", OCTOBER, "exec-2", [lines(OCTOBER, "c", ["5"]), lines(OCTOBER, "d", ["6", repr(cost), "7"])]
    )
    output = run_refused(config)
    assert output.strip().splitlines()[-1] == (
        f"run failed: {sink.root / keys[1]}, {problem}; fix or re-export the file, nothing was loaded"
    )
    assert period_totals(warehouse_of(config)) == {"2026-10": (4, Decimal(40))}


def write_ndjson(path: Path, rows: list[dict | str]) -> Path:
    path.write_text("".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in rows))
    return path


NOVEMBER_ROW = gcp_row(
    usage_start_time="2026-11-03 00:00:00 UTC",
    usage_end_time="2026-11-03 01:00:00 UTC",
    export_time="2026-11-03 05:00:00 UTC",
    invoice={"month": "202611"},
)


@pytest.fixture
def gcp_site(tmp_path: Path) -> Path:
    """A GCP export folder of NDJSON files with October and November loaded, a row of 6.136 each."""
    (tmp_path / "gcp").mkdir()
    write_ndjson(tmp_path / "gcp" / "export-1.jsonl", [gcp_row(), NOVEMBER_ROW])
    config = write_config(tmp_path, "sources:\n  - {name: gcp, kind: gcp_billing, path: gcp}\n")
    code, output = invoke("run", "--config", str(config))
    assert code == 0, output
    assert period_totals(warehouse_of(config)) == {"2026-10": (1, Decimal("6.136")), "2026-11": (1, Decimal("6.136"))}
    return config


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        (json.dumps(gcp_row())[:90], "line 3: not JSON: Unterminated string starting at (column 84)"),
        ("[1, 2]", "line 3: not a JSON object"),
        (gcp_row(invoice="202610"), 'line 3, key invoice: "202610" is not a JSON object'),
        (gcp_row(labels={"run": "r1"}), 'line 3, key labels: {"run": "r1"} is not a JSON array'),
        (
            gcp_row(usage_start_time="07/10/2026 00:00"),
            "line 3, key usage_start_time: '07/10/2026 00:00' is not a timestamp such as 2026-10-07 00:00:00 UTC",
        ),
    ],
)
def test_a_bad_ndjson_line_names_its_file_line_and_key(gcp_site: Path, line: dict | str, problem: str) -> None:
    # a blank line before it: lines are counted as an editor counts them
    second = write_ndjson(gcp_site.parent / "gcp" / "export-2.jsonl", [gcp_row(cost=1), "", line])
    output = run_refused(gcp_site)
    assert output.strip().splitlines()[-1] == (
        f"run failed: {second}, {problem}; fix or re-export the file, nothing was loaded"
    )
    assert "export-1" not in output


def test_a_row_of_a_period_without_a_partition_stops_the_run_before_any_load(gcp_site: Path) -> None:
    early = gcp_row(cost=2, invoice={"month": "201912"})
    second = write_ndjson(gcp_site.parent / "gcp" / "export-2.jsonl", [gcp_row(cost=1), early])
    output = run_refused(gcp_site)
    assert output.strip().splitlines()[-1] == (
        f"run failed: {second}, line 2: billing period 2019-12 is outside the billing periods RunLedger loads, "
        f"2020-01 to {datetime.now(UTC):%Y-%m} (the monthly Dagster partitions); remove the period's rows from the "
        "export of source gcp, or load the other periods with --period; nothing was loaded"
    )
    # the periods that have a partition load when named
    code, output = invoke("run", "--config", str(gcp_site), "--period", "2026-10", "--period", "2026-11")
    assert code == 0, output
    assert period_totals(warehouse_of(gcp_site)) == {
        "2026-10": (2, Decimal("7.136")),
        "2026-11": (1, Decimal("6.136")),
    }
