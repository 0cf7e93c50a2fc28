"""The lake serves its readers while the nightly job writes: readers never block, break or see
half a replacement; two writers both succeed; `--at` reads an earlier night; a restated period
replaces its files; a warehouse file of an earlier version is converted once; a data file lost or
damaged by hand is named and repaired; the upkeep deletes files the catalog does not know."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from pipelines.cli import main
from pipelines.warehouse.connection import connect, create_schema
from pipelines.warehouse.lake import Lake, extension_directory
from pipelines.warehouse.maintenance import maintain_lake
from tests.support.demo_lake import SharedDemo
from tests.support.lake import lake_of, reading, writing
from tests.support.warehouse_state import table_checksums

RUNLEDGER = str(Path(sys.executable).with_name("runledger"))
# What every whole state of the demo lake says, whatever a run is replacing: each (source,
# period) holds its delivery's rows exactly as the load recorded them, and allocations sum to it.
WHOLE_STATE = """
select
    count(*) filter (where rows_raw_focus_diff <> 0 or billed_raw_focus_diff <> 0) as raw_focus_differences,
    count(*) filter (
        where billed_focus_allocated_diff <> 0 or effective_focus_allocated_diff <> 0
    ) as allocated_differences,
    sum(focus_rows) as line_items
from reconciliation
"""
# The documented lines for a notebook (docs/operations.md): plain DuckDB, the packaged extensions,
# and `override_data_path` as the lines say for a copied project (each test's is a copy).
NOTEBOOK_READER = """
import json, os, sys, time
import duckdb
lake, stop = sys.argv[1], sys.argv[2]
conn = duckdb.connect(config={"autoinstall_known_extensions": False})
conn.execute("set extension_directory = '%s'")
conn.execute("load ducklake; load sqlite")
conn.execute(
    f"attach 'ducklake:sqlite:{lake}/catalog.sqlite' as lake "
    f"(data_path '{lake}/data/', read_only, override_data_path true)"
)
conn.execute("use lake")
reads, errors, states = 0, [], set()
end = time.monotonic() + 600
while not os.path.exists(stop) and time.monotonic() < end:
    try:
        states.add(tuple(conn.execute(sys.argv[3]).fetchone()))
        reads += 1
    except duckdb.Error as error:
        errors.append(str(error))
    time.sleep(0.05)
print(json.dumps({"reads": reads, "errors": errors, "states": sorted(map(list, states))}))
"""


@pytest.fixture(scope="module")
def demo_night(shared_demo: SharedDemo) -> Path:
    """The demo project after its first night (the session's: copy it before writing to it)."""
    return shared_demo.config


@pytest.fixture
def demo_project(demo_night: Path, tmp_path: Path) -> Path:
    """A copy of the demo project after its first night (files keep their times: nothing is new)."""
    project = tmp_path / "project"
    shutil.copytree(demo_night.parent, project, symlinks=True)
    return project / demo_night.name


def _touch_deliveries(project: Path) -> None:
    """A new delivery of the same rows: the sources see new files and reload both periods."""
    for path in (project / ".runledger" / "demo").rglob("*"):
        if path.is_file() and path.suffix in {".parquet", ".json", ".jsonl", ".ndjson"}:
            os.utime(path, (time.time(), time.time() + 60))


@contextmanager
def notebook_readers(lake_folder: Path) -> Iterator[list[subprocess.Popen]]:
    """Two notebook readers querying the lake until the block ends."""
    script = NOTEBOOK_READER % extension_directory()
    stop = lake_folder.parent / "stop-reading"
    readers = [
        subprocess.Popen(
            [sys.executable, "-c", script, str(lake_folder), str(stop), WHOLE_STATE],
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    try:
        yield readers
    finally:
        stop.touch()
        for reader in readers:
            reader.wait(timeout=120)


def test_readers_never_break_or_see_half_a_replacement_during_a_nightly_run_and_a_backfill(demo_project: Path):
    project = demo_project.parent
    lake_folder = project / ".runledger" / "lake"
    _touch_deliveries(project)
    query_reads = []
    with notebook_readers(lake_folder) as readers:
        nightly = subprocess.Popen(
            [RUNLEDGER, "run", "--config", str(demo_project), "--period", "2026-11"], stderr=subprocess.PIPE, text=True
        )
        backfill = subprocess.Popen(
            [RUNLEDGER, "run", "--config", str(demo_project), "--period", "2026-10"], stderr=subprocess.PIPE, text=True
        )
        while nightly.poll() is None or backfill.poll() is None:
            answer = subprocess.run(
                [RUNLEDGER, "query", "--config", str(demo_project), "--format", "json", WHOLE_STATE],
                capture_output=True,
                text=True,
                check=False,
            )
            query_reads.append((answer.returncode, answer.stdout, answer.stderr))
        nightly_errors, backfill_errors = nightly.communicate()[1], backfill.communicate()[1]
    assert (nightly.returncode, backfill.returncode) == (0, 0), nightly_errors + backfill_errors
    assert "waiting for the writer holding" in nightly_errors + backfill_errors
    whole = [0, 0, 12413]
    for reader in readers:
        report = json.loads(reader.stdout.read())
        assert report["errors"] == [] and report["reads"] > 20, report
        assert report["states"] == [whole], report
    assert query_reads and all(code == 0 for code, _, _ in query_reads), query_reads
    assert {json.dumps(json.loads(out)[0], sort_keys=True) for _, out, _ in query_reads} == {
        json.dumps({"raw_focus_differences": 0, "allocated_differences": 0, "line_items": "12413"}, sort_keys=True)
    }


def _run_costs(config: Path, *at: str) -> str:
    result = CliRunner().invoke(
        main, ["query", "--config", str(config), *at, "--format", "csv", "select * from run_costs order by all"]
    )
    assert result.exit_code == 0, result.output
    return result.output


def test_query_at_a_snapshot_or_a_moment_reproduces_an_earlier_night(demo_project: Path) -> None:
    first_night = _run_costs(demo_project)
    with reading(demo_project) as conn:
        ((snapshot, moment),) = conn.execute(
            "select max(snapshot_id), max(snapshot_time) from lake.snapshots()"
        ).fetchall()
        (loaded,) = conn.execute(
            "select count(*) from loads inner join load_snapshots using (load_id) where status = 'loaded'"
        ).fetchone()
    assert loaded == 4  # two sources × two periods, each with the snapshot that committed it
    # the next night, the GCP export has restated one row
    export = next((demo_project.parent / ".runledger" / "demo" / "gcp").glob("*.json*"))
    rows = export.read_text().splitlines()
    restated = next(number for number, row in enumerate(rows) if "llm-3b-pt-gcp" in row)
    row = json.loads(rows[restated])
    row["cost"] = float(row["cost"]) + 1000
    rows[restated] = json.dumps(row)
    export.write_text("\n".join(rows) + "\n")
    result = CliRunner().invoke(main, ["run", "--config", str(demo_project)])
    assert result.exit_code == 0, result.output
    assert _run_costs(demo_project) != first_night
    assert _run_costs(demo_project, "--at", str(snapshot)) == first_night
    assert _run_costs(demo_project, "--at", moment.isoformat()) == first_night
    report = CliRunner().invoke(
        main,
        [
            "report",
            "--config",
            str(demo_project),
            "--run",
            "llm-3b-pt-gcp",
            "--at",
            str(snapshot),
            "--out",
            str(demo_project.parent / "then"),
        ],
    )
    assert report.exit_code == 0, report.output
    assert "44,146.34" in (demo_project.parent / "then" / "llm-3b-pt-gcp" / "report.md").read_text()
    unknown = CliRunner().invoke(main, ["query", "--config", str(demo_project), "--at", "999", "select 1"])
    assert unknown.exit_code == 2 and "has no snapshot with id 999" in unknown.output
    over_today = CliRunner().invoke(main, ["report", "--config", str(demo_project), "--all", "--at", str(snapshot)])
    assert over_today.exit_code == 2 and "give --out DIR with --at" in over_today.output


FILES = """
with live_files as (
    select table_id from __ducklake_metadata_lake.ducklake_data_file where end_snapshot is null
),

tables as (
    select table_id, table_name from __ducklake_metadata_lake.ducklake_table where end_snapshot is null
)

select
    count(*) filter (where tables.table_name in ('focus_line_items', 'cost_allocations')) as restated,
    count(*) as everything,
    (select count(*) from __ducklake_metadata_lake.ducklake_delete_file where end_snapshot is null) as deletes
from live_files
inner join tables on live_files.table_id = tables.table_id
"""


def _file_counts(project: Path) -> tuple[int, int, int, int]:
    """The live data files of the restated tables and of all, the live delete files, and the data
    files on disk."""
    with reading(project) as conn:
        restated, everything, deletes = conn.execute(FILES).fetchone()
    on_disk = sum(1 for path in (project / ".runledger" / "lake" / "data").rglob("*.parquet"))
    return restated, everything, deletes, on_disk


def test_a_restated_period_replaces_its_files_and_the_upkeep_deletes_the_old_ones(demo_project: Path) -> None:
    project = demo_project.parent
    restated, _, deletes, _ = _file_counts(project)
    assert (restated, deletes) == (6, 0)  # a file per (source, period) of line items, per period of allocations
    for _ in range(3):
        _touch_deliveries(project)
        result = CliRunner().invoke(main, ["run", "--config", str(demo_project)])
        assert result.exit_code == 0, result.output
        assert _file_counts(project)[0::2][:2] == (restated, 0)  # replaced files, no delete file
    live, on_disk = _file_counts(project)[1], _file_counts(project)[3]
    assert on_disk > live  # the earlier nights' files stay for --at
    with writing(project) as conn:
        upkeep = maintain_lake(conn, retention_days=0)
    assert upkeep.expired_snapshots > 0 and upkeep.deleted_files > 0
    _, live, deletes, on_disk = _file_counts(project)
    assert (deletes, on_disk) == (0, live)
    with reading(project) as conn:
        assert conn.execute("select sum(focus_rows) from reconciliation").fetchone() == (12413,)


def test_an_earlier_warehouse_file_is_converted_once_and_nothing_is_lost(demo_project: Path) -> None:
    project = demo_project.parent
    legacy = project / "legacy" / ".runledger" / "warehouse.duckdb"
    legacy.parent.mkdir(parents=True)
    with duckdb.connect(str(legacy)) as file, reading(project) as lake:
        create_schema(file)
        for (table,) in lake.execute(
            "select table_name from duckdb_tables() where database_name = 'lake' "
            "and table_name not in ('schema_version', 'step_inputs')"
        ).fetchall():
            file.register("rows", lake.execute(f'select * from "{table}"').to_arrow_table())
            file.execute(f'insert into "{table}" by name select * from rows')
            file.unregister("rows")
        expected = lake.execute("select * from run_costs order by all").fetchall()
    config = legacy.parent.parent / "runledger.yaml"
    config.write_text(demo_project.read_text().replace("warehouse: .runledger/lake\n", ""))
    (legacy.parent / "demo").symlink_to(project / ".runledger" / "demo")

    refused = CliRunner().invoke(main, ["run", "--config", str(config)])
    assert refused.exit_code == 2 and "runledger migrate" in refused.output and str(legacy) in refused.output
    query = CliRunner().invoke(main, ["query", "--config", str(config), "select 1"])
    assert query.exit_code == 2 and "runledger migrate" in query.output
    checked = CliRunner().invoke(main, ["check", "--config", str(config)])
    assert checked.exit_code == 0 and "warning:" in checked.output and "runledger migrate" in checked.output
    naming_the_file = config.with_name("named.yaml")
    naming_the_file.write_text(f"warehouse: .runledger/warehouse.duckdb\n{config.read_text()}")
    named = CliRunner().invoke(main, ["run", "--config", str(naming_the_file)])
    assert named.exit_code == 2 and f"into the lake {legacy.parent / 'lake'} with" in " ".join(named.output.split())
    migrated = CliRunner().invoke(main, ["migrate", "--config", str(config)])
    assert migrated.exit_code == 0, migrated.output
    assert "focus_line_items: 12,413 rows" in migrated.output
    assert legacy.is_file()  # kept as it was
    with reading(config) as conn:
        assert conn.execute("select * from run_costs order by all").fetchall() == expected
    again = CliRunner().invoke(main, ["migrate", "--config", str(config)])
    assert again.exit_code == 2 and "nothing to migrate" in again.output
    result = CliRunner().invoke(main, ["run", "--config", str(config)])
    assert result.exit_code == 0, result.output


def test_a_moved_project_reads_its_own_lake(demo_project: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    moved = tmp_path_factory.mktemp("moved") / "project"
    demo_project.parent.rename(moved)
    assert connect(lake_of(moved)).execute("select count(*) from focus_line_items").fetchone() == (12413,)


RECONCILED = (
    "select source_name, billing_period, focus_rows, focus_billed_cost, allocated_billed_cost "
    "from reconciliation order by all"
)
FIGURES = ("select * from run_costs order by all", "select * from budget_alerts order by all", RECONCILED)


def _figures(project: Path) -> list[list[tuple]]:
    with reading(project) as conn:
        return [conn.execute(sql).fetchall() for sql in FIGURES]


def _data_file(project: Path, table: str, partition: str = "") -> Path:
    (path,) = (project / ".runledger" / "lake" / "data" / "main" / table / partition).glob("ducklake-*.parquet")
    return path


def test_a_lost_or_damaged_lake_file_is_named_and_repair_gives_a_clean_nights_figures(demo_project: Path) -> None:
    project = demo_project.parent
    config = ["--config", str(demo_project)]
    clean = _figures(project)
    with reading(project) as conn:
        loads = conn.execute("select * from loads order by all").fetchall()
        snapshots = {row[0] for row in conn.execute("select snapshot_id from lake.snapshots()").fetchall()}
    run_costs = _data_file(project, "run_costs")
    run_costs.unlink()
    _data_file(project, "focus_line_items", "x_SourceName=aws-main/year=2026/month=10").unlink()
    truncated = _data_file(project, "focus_line_items", "x_SourceName=gcp-main/year=2026/month=11")
    size = truncated.stat().st_size
    with truncated.open("r+b") as file:
        file.truncate(1000)

    for command in (["run"], ["run", "--full-refresh"], ["report", "--all"]):
        failed = CliRunner().invoke(main, [*command, *config])
        assert failed.exit_code == 1, failed.output
        message = " ".join(failed.output.split())
        assert message.startswith("run failed: the lake's data files are not as its catalog recorded them")
        assert f"run_costs: data file {run_costs} is missing" in message
        assert "focus_line_items (source aws-main, billing period 2026-10): data file " in message
        assert (
            f"focus_line_items (source gcp-main, billing period 2026-11): data file {truncated} is 1,000 bytes "
            f"where the catalog recorded {size:,}"
        ) in message
        assert message.endswith("run `runledger repair` (docs/operations.md#a-lost-or-damaged-lake-file)")
    queried = CliRunner().invoke(main, ["query", *config, "select * from run_costs"])
    assert queried.exit_code == 2
    assert " ".join(queried.output.split()).startswith(
        f"error: run_costs: the lake's data file {run_costs} is missing or damaged (IO Error: Cannot open file"
    )

    # a file of RunLedger's own records is restored from a backup, never rebuilt: nothing changes
    load_file = next(run_costs.parent.parent.joinpath("loads").glob("ducklake-*.parquet"))
    backup = load_file.read_bytes()
    load_file.unlink()
    refused = CliRunner().invoke(main, ["repair", *config])
    assert refused.exit_code == 1
    assert f"loads: data file {load_file} is missing: these rows are RunLedger's own record" in refused.output
    load_file.write_bytes(backup)

    repaired = CliRunner().invoke(main, ["repair", *config])
    assert repaired.exit_code == 0, repaired.output
    assert "recreated focus_line_items, run_costs, step_inputs; reloading aws-main 2026-10, gcp-main 2026-11 " in (
        repaired.output
    )
    assert repaired.output.rstrip().endswith("repaired: every data file of the lake is whole again")
    assert _figures(project) == clean
    with reading(project) as conn:
        after = conn.execute("select * from loads order by all").fetchall()
        assert all(row in after for row in loads)  # the loads kept, the reloads recorded beside them
        assert snapshots <= {row[0] for row in conn.execute("select snapshot_id from lake.snapshots()").fetchall()}
    again = CliRunner().invoke(main, ["repair", *config])
    assert again.exit_code == 0 and "nothing to repair" in again.output


def test_the_upkeep_deletes_data_files_the_catalog_does_not_know(demo_project: Path) -> None:
    project = demo_project.parent
    folder = _data_file(project, "run_costs").parent
    # as an upkeep killed before its commit leaves them, a week ago; and a writer's, still open
    left = [folder / f"ducklake-left-by-a-killed-upkeep-{number}.parquet" for number in range(3)]
    for path in left:
        shutil.copy(_data_file(project, "run_progress"), path)
        os.utime(path, (time.time() - 7 * 86400, time.time() - 7 * 86400))
    writing_now = folder / "ducklake-being-written.parquet"
    shutil.copy(_data_file(project, "run_progress"), writing_now)
    with writing(project) as conn:
        upkeep = maintain_lake(conn, retention_days=90)
    assert upkeep.orphaned_files == 3
    assert not any(path.exists() for path in left) and writing_now.exists()
    with reading(project) as conn:
        assert conn.execute("select count(*) from run_costs").fetchone() == (32,)


def test_a_second_configuration_writing_the_lake_is_refused_and_changes_nothing(
    demo_project: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    lake = lake_of(demo_project)
    other = tmp_path_factory.mktemp("other")
    (other / "costs.csv").write_text("date,cost_category,amount,currency\n2026-11-02,labor,100.00,USD\n")
    config = other / "runledger.yaml"
    # the demo's own source name: the run would replace the demo's AWS spend with this file's 100.00
    config.write_text(
        f"warehouse: {lake.sqlite_file.parent}\nsources:\n  - {{name: aws-main, kind: manual_costs, path: costs.csv}}\n"
    )
    before = table_checksums(lake, with_journal=True)
    refused = CliRunner().invoke(main, ["run", "--config", str(config)])
    assert refused.exit_code == 2, refused.output
    assert refused.output.splitlines()[-1] == (
        f"error: {lake.describe()} belongs to the configuration {demo_project} (since "
        f"{owners(lake)[0][2]:%Y-%m-%d %H:%M} UTC), not {config}: two configurations writing one lake replace each "
        "other's sources, run registry and budgets. Give this configuration a lake of its own (`warehouse:`), or, if "
        "it replaces that one (a moved project), run `runledger run --take-over-lake` once"
    )
    assert table_checksums(lake, with_journal=True) == before
    assert [(source, configuration) for source, configuration, _ in owners(lake)] == [
        (None, "../../runledger.yaml"),
        ("aws-main", "../../runledger.yaml"),
        ("gcp-main", "../../runledger.yaml"),
    ]


def owners(lake: Lake) -> list[tuple]:
    with reading(lake) as conn:
        return conn.execute("select * from lake_owners order by source_name nulls first").fetchall()
